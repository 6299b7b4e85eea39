import { AppliedPolicy, closestFirst, resolveSetting } from './policy-resolution.util';

let seq = 0;
function applied(level: AppliedPolicy['level'], settings: unknown, o: Partial<AppliedPolicy> = {}): AppliedPolicy {
  seq += 1;
  return {
    policyId: `policy-${seq}`,
    policyName: `Policy ${seq}`,
    policyUpdatedAt: new Date(0),
    level,
    priority: 100,
    assignedAt: new Date(1_700_000_000_000),
    assignmentId: `assignment-${String(seq).padStart(3, '0')}`,
    settings,
    ...o,
  };
}

const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const uac = (list: AppliedPolicy[]) => resolveSetting(list, 'uacInterceptionEnabled', isBoolean, true);

describe('configuration policy resolution', () => {
  it('defaults to true when nothing is assigned or nothing sets the value', () => {
    expect(uac([])).toBe(true);
    expect(uac([applied('device', {}), applied('partner', { other: false })])).toBe(true);
  });

  it.each([['partner'], ['organization'], ['site'], ['device_group'], ['device']] as const)('takes the value of a policy assigned at %s level when it is the only one', (level) => {
    expect(uac([applied(level, { uacInterceptionEnabled: false })])).toBe(false);
  });

  it('lets the closer level win whatever the priorities: device, group, site, organization, partner', () => {
    const levels = ['partner', 'organization', 'site', 'device_group', 'device'] as const;
    for (let closest = 0; closest < levels.length; closest++) {
      const list = levels.slice(0, closest + 1).map((level, i) => applied(level, { uacInterceptionEnabled: i % 2 === 0 }, { priority: 10_000 - i }));
      expect(uac(list)).toBe(closest % 2 === 0);
      expect(uac([...list].reverse())).toBe(closest % 2 === 0);
    }
  });

  it('picks the lower priority number within one level, then the older assignment, then the smaller assignment id', () => {
    expect(uac([applied('site', { uacInterceptionEnabled: true }, { priority: 20 }), applied('site', { uacInterceptionEnabled: false }, { priority: 10 })])).toBe(false);
    const older = applied('site', { uacInterceptionEnabled: false }, { assignedAt: new Date(1) });
    const newer = applied('site', { uacInterceptionEnabled: true }, { assignedAt: new Date(2) });
    expect(uac([newer, older])).toBe(false);
    const a = applied('site', { uacInterceptionEnabled: true }, { assignmentId: 'b' });
    const b = applied('site', { uacInterceptionEnabled: false }, { assignmentId: 'a' });
    expect(uac([a, b])).toBe(false);
  });

  it('skips a closer policy that carries the feature without the setting', () => {
    expect(uac([applied('device', {}), applied('organization', { uacInterceptionEnabled: false })])).toBe(false);
    expect(uac([applied('device', { uacInterceptionEnabled: 'yes' }), applied('organization', { uacInterceptionEnabled: false })])).toBe(false);
  });

  it('lists a policy assigned at several levels once, at its closest assignment', () => {
    const site = applied('site', { mode: 'audit' }, { policyId: 'same' });
    const device = applied('device', { mode: 'audit' }, { policyId: 'same' });
    const org = applied('organization', { mode: 'blocklist' });
    expect(closestFirst([site, org, device]).map((p) => [p.policyId, p.level])).toEqual([
      ['same', 'device'],
      [org.policyId, 'organization'],
    ]);
  });
});
