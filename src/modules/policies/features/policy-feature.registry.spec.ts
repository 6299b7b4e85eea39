import { featureProblems } from './policy-feature.registry';

describe('policy features', () => {
  it('accepts configuration features on a configuration policy', () => {
    expect(featureProblems('configuration', { agent: { checkInIntervalSeconds: 60, logLevel: 'info' }, monitoring: { cpuThresholdPercent: 90 } })).toEqual([]);
  });

  it('refuses unknown features and features of another policy type', () => {
    expect(featureProblems('configuration', { teleport: {} })).toEqual([[['teleport'], expect.stringContaining('unknown feature')]]);
    expect(featureProblems('configuration', { patch: { schedule: { frequency: 'daily', time: '02:00' } } })).toEqual([[['patch'], expect.stringContaining('does not apply')]]);
    expect(featureProblems('patch', [])).toEqual([[[], expect.any(String)]]);
  });

  it('checks setting bounds with the path of the setting', () => {
    expect(featureProblems('configuration', { agent: { checkInIntervalSeconds: 3600 } })).toEqual([]);
    expect(featureProblems('configuration', { agent: { checkInIntervalSeconds: 3601 } })).toEqual([[['agent', 'checkInIntervalSeconds'], 'must be at most 3600']]);
  });

  it('requires the day a weekly or monthly patch schedule runs on, and a real time zone', () => {
    expect(featureProblems('patch', { patch: { schedule: { frequency: 'weekly', dayOfWeek: 'sunday', time: '23:59', timezone: 'Europe/Paris' } } })).toEqual([]);
    expect(featureProblems('patch', { patch: { schedule: { frequency: 'weekly', time: '02:00' } } })).toEqual([[['patch', 'schedule', 'dayOfWeek'], expect.any(String)]]);
    expect(featureProblems('patch', { patch: { schedule: { frequency: 'daily', dayOfMonth: 3, time: '02:00' } } })).toEqual([[['patch', 'schedule', 'dayOfMonth'], expect.any(String)]]);
    expect(featureProblems('patch', { patch: { schedule: { frequency: 'daily', time: '24:00' } } })).toEqual([[['patch', 'schedule', 'time'], expect.any(String)]]);
    expect(featureProblems('patch', { patch: { schedule: { frequency: 'daily', time: '02:00', timezone: 'Mars/Olympus' } } })).toEqual([[['patch', 'schedule', 'timezone'], expect.any(String)]]);
    expect(featureProblems('patch', { patch: { schedule: { frequency: 'monthly', dayOfMonth: 29, time: '02:00' } } })).toEqual([[['patch', 'schedule', 'dayOfMonth'], 'must be at most 28']]);
    expect(featureProblems('patch', { patch: { excludedKbs: ['KB5034441'] } })).toEqual([[['patch', 'schedule'], 'is required']]);
  });
});
