import { mergeRuleWrite, newRuleWrite, ruleShapeError, storedWindow } from './rule-write.util';

describe('newRuleWrite', () => {
  it('applies the defaults of spec P2.2: priority 100, enabled, organization-wide, no approval override', () => {
    const rule = newRuleWrite({ name: 'r', verdict: 'auto_approve', matchSigner: 'Acme' });
    expect(rule).toMatchObject({ priority: 100, enabled: true, siteId: null, approvalDurationMinutes: null, timeWindow: null, matchNegate: null });
  });

  it('keeps given values over the defaults, including priority 0 and enabled false', () => {
    expect(newRuleWrite({ name: 'r', verdict: 'auto_deny', matchUser: 'u', priority: 0, enabled: false })).toMatchObject({ priority: 0, enabled: false });
  });

  it('stores criteria trimmed, blank ones as null and the hash in lower case', () => {
    const rule = newRuleWrite({ name: 'r', verdict: 'auto_deny', matchSigner: '  ', matchHash: 'AB'.repeat(32), matchUser: ' bob ' });
    expect(rule).toMatchObject({ matchSigner: null, matchHash: 'ab'.repeat(32), matchUser: 'bob' });
  });
});

describe('mergeRuleWrite', () => {
  const base = newRuleWrite({ name: 'base', verdict: 'require_approval', matchSigner: 'Acme', priority: 5 });

  it('keeps what the update leaves undefined and clears what it sets to null', () => {
    const merged = mergeRuleWrite(base, { name: undefined, matchSigner: null, matchUser: 'alice' });
    expect(merged).toMatchObject({ name: 'base', priority: 5, matchSigner: null, matchUser: 'alice' });
  });

  it('drops an empty negation list', () => {
    expect(mergeRuleWrite(base, { matchNegate: [] }).matchNegate).toBeNull();
  });
});

describe('storedWindow', () => {
  it('makes the zone explicit and every day null', () => {
    expect(storedWindow({ start: '09:00', end: '17:00' })).toEqual({ start: '09:00', end: '17:00', days: null, timezone: 'UTC' });
  });

  it('sorts and de-duplicates days', () => {
    expect(storedWindow({ start: '22:00', end: '06:00', days: [5, 1, 5], timezone: 'Europe/Paris' })).toEqual({
      start: '22:00',
      end: '06:00',
      days: [1, 5],
      timezone: 'Europe/Paris',
    });
  });

  it('is null without a window', () => expect(storedWindow(null)).toBeNull());
});

describe('ruleShapeError', () => {
  const rule = (input: Parameters<typeof newRuleWrite>[0]) => ruleShapeError(newRuleWrite(input));

  it('accepts a well-formed executable rule and a well-formed tool-action rule', () => {
    expect(rule({ name: 'r', verdict: 'auto_approve', matchSigner: 'Acme', matchUser: 'bob' })).toBeNull();
    expect(rule({ name: 'r', verdict: 'auto_deny', matchToolName: 'run_script', matchRiskTier: 4 })).toBeNull();
  });

  it.each([
    ['no criterion', { name: 'r', verdict: 'auto_approve' as const }],
    ['only a time window', { name: 'r', verdict: 'auto_approve' as const, timeWindow: { start: '09:00', end: '17:00' } }],
    ['executable and tool criteria mixed', { name: 'r', verdict: 'auto_approve' as const, matchSigner: 'Acme', matchToolName: 'read_file' }],
    ['signer and signer group together', { name: 'r', verdict: 'auto_approve' as const, matchSigner: 'Acme', matchSignerGroupId: '00000000-0000-4000-8000-000000000001' }],
    ['ignore on a tool-action rule', { name: 'r', verdict: 'ignore' as const, matchToolName: 'read_file' }],
    ['a negated criterion that is not set', { name: 'r', verdict: 'auto_deny' as const, matchUser: 'u', matchNegate: ['signer' as const] }],
  ])('refuses %s with invalid_rule_shape', (_label, input) => {
    expect(rule(input)).toMatchObject({ code: 'invalid_rule_shape' });
  });

  it('refuses an unreachable tier with its valid tiers', () => {
    const error = rule({ name: 'r', verdict: 'auto_approve', matchToolName: 'read_file', matchRiskTier: 3 });
    expect(error).toMatchObject({ code: 'pam_rule_risk_tier_unreachable', extra: { validTiers: [0] } });
  });

  it('accepts any tier for a tool the registry does not know', () => {
    expect(rule({ name: 'r', verdict: 'auto_approve', matchToolName: 'brand_new_tool', matchRiskTier: 1 })).toBeNull();
  });
});
