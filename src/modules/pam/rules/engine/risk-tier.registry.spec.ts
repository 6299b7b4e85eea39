import {
  allReachableTiers,
  findTierDrift,
  isKnownTool,
  reachableTiers,
  resolveTier,
  riskTierStatus,
  tiersForToolSelector,
  TOOL_TIER_REGISTRY,
} from './risk-tier.registry';

describe('the tool tier registry', () => {
  it('lists a dozen or so uniquely named tools, each with a reason', () => {
    const names = TOOL_TIER_REGISTRY.map((entry) => entry.toolName);
    expect(names.length).toBeGreaterThanOrEqual(10);
    expect(names.length).toBeLessThanOrEqual(20);
    expect(new Set(names).size).toBe(names.length);
    for (const entry of TOOL_TIER_REGISTRY) {
      expect(entry.toolName).toMatch(/^[a-z][a-z_]*$/);
      expect(entry.why.length).toBeGreaterThan(10);
    }
  });

  it('only uses tiers 0 to 4', () => {
    for (const entry of TOOL_TIER_REGISTRY) {
      for (const tier of [entry.defaultTier, ...Object.values(entry.actions)]) {
        expect([0, 1, 2, 3, 4]).toContain(tier);
      }
    }
  });

  it('gives every tool its highest tier as default, so an unlisted action is never under-classified', () => {
    for (const entry of TOOL_TIER_REGISTRY) {
      expect(entry.defaultTier).toBe(Math.max(entry.defaultTier, ...Object.values(entry.actions)));
    }
  });

  it('keys actions in lower case, as resolveTier looks them up', () => {
    for (const entry of TOOL_TIER_REGISTRY) {
      for (const action of Object.keys(entry.actions)) expect(action).toBe(action.toLowerCase());
    }
  });

  it('reaches every tier through some tool', () => {
    expect(allReachableTiers()).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('resolveTier', () => {
  it('gives the fixed tier of single-tier tools', () => {
    expect(resolveTier('read_file')).toBe(0);
    expect(resolveTier('list_processes')).toBe(0);
    expect(resolveTier('restart_service')).toBe(2);
    expect(resolveTier('kill_process')).toBe(2);
    expect(resolveTier('install_software')).toBe(3);
    expect(resolveTier('reboot_device')).toBe(3);
    expect(resolveTier('edit_registry')).toBe(4);
  });

  it('resolves run_script by its action: 3 as the user, 4 elevated', () => {
    expect(resolveTier('run_script', 'user')).toBe(3);
    expect(resolveTier('run_script', 'elevated')).toBe(4);
    expect(resolveTier('run_script', 'system')).toBe(4);
  });

  it('treats a missing or unlisted action as the tool default', () => {
    expect(resolveTier('run_script')).toBe(4);
    expect(resolveTier('run_script', null)).toBe(4);
    expect(resolveTier('run_script', 'something_new')).toBe(4);
    expect(resolveTier('read_file', 'anything')).toBe(0);
  });

  it('ignores case and surrounding spaces in tool and action names', () => {
    expect(resolveTier(' Run_Script ', 'USER')).toBe(3);
    expect(resolveTier('MANAGE_LOCAL_USER', ' List ')).toBe(0);
  });

  it('is null for a tool it does not know', () => {
    expect(resolveTier('format_disk')).toBeNull();
    expect(isKnownTool('format_disk')).toBe(false);
    expect(isKnownTool('READ_FILE')).toBe(true);
  });
});

describe('reachableTiers', () => {
  it('lists every tier a tool can resolve to, ascending', () => {
    expect(reachableTiers('run_script')).toEqual([3, 4]);
    expect(reachableTiers('manage_local_user')).toEqual([0, 4]);
    expect(reachableTiers('read_file')).toEqual([0]);
  });

  it('is null for an unknown tool', () => {
    expect(reachableTiers('format_disk')).toBeNull();
  });
});

describe('tiersForToolSelector', () => {
  it('gives the union over all tools when the rule names none', () => {
    expect(tiersForToolSelector(null)).toEqual([0, 1, 2, 3, 4]);
    expect(tiersForToolSelector('  ')).toEqual([0, 1, 2, 3, 4]);
  });

  it('gives the union over the other tools when the name is negated', () => {
    const others = TOOL_TIER_REGISTRY.filter((entry) => entry.toolName !== 'edit_registry').flatMap((entry) => [
      entry.defaultTier,
      ...Object.values(entry.actions),
    ]);
    expect(tiersForToolSelector('edit_registry', true)).toEqual([...new Set(others)].sort());
  });

  it('is null for an unknown tool, negated or not', () => {
    expect(tiersForToolSelector('format_disk')).toBeNull();
    expect(tiersForToolSelector('format_disk', true)).toBeNull();
  });
});

describe('riskTierStatus', () => {
  it('marks a tier the named tool cannot reach as stale and lists the valid tiers', () => {
    expect(riskTierStatus({ matchToolName: 'read_file', matchRiskTier: 3 })).toEqual({ stale: true, validTiers: [0] });
  });

  it('does not mark a reachable tier', () => {
    expect(riskTierStatus({ matchToolName: 'run_script', matchRiskTier: 3 })).toEqual({
      stale: false,
      validTiers: [3, 4],
    });
  });

  it('never marks a negated tier, which only narrows', () => {
    expect(riskTierStatus({ matchToolName: 'read_file', matchRiskTier: 3, matchNegate: ['riskTier'] })).toEqual({
      stale: false,
      validTiers: [0],
    });
  });

  it('has nothing to say about rules without a tier or with an unknown tool', () => {
    expect(riskTierStatus({ matchToolName: 'read_file' })).toEqual({ stale: false, validTiers: null });
    expect(riskTierStatus({ matchToolName: 'format_disk', matchRiskTier: 4 })).toEqual({
      stale: false,
      validTiers: null,
    });
  });
});

describe('findTierDrift', () => {
  const rule = (id: string, fields: object) => ({ id, enabled: true, ...fields });

  it('returns the enabled tier-pinned rules their tool can no longer reach, with the valid tiers', () => {
    const rules = [
      rule('stale', { matchToolName: 'read_file', matchRiskTier: 2 }),
      rule('fine', { matchToolName: 'restart_service', matchRiskTier: 2 }),
      rule('disabled', { enabled: false, matchToolName: 'read_file', matchRiskTier: 2 }),
      rule('negated', { matchToolName: 'read_file', matchRiskTier: 2, matchNegate: ['riskTier'] }),
      rule('any-tool', { matchRiskTier: 1 }),
      rule('unknown-tool', { matchToolName: 'format_disk', matchRiskTier: 4 }),
      rule('no-tier', { matchToolName: 'read_file' }),
      rule('stale-case', { matchToolName: 'KILL_PROCESS', matchRiskTier: 4 }),
    ];
    expect(findTierDrift(rules)).toEqual([
      { rule: rules[0], validTiers: [0] },
      { rule: rules[7], validTiers: [2] },
    ]);
  });

  it('returns nothing when every rule can still match', () => {
    expect(findTierDrift([rule('a', { matchToolName: 'run_script', matchRiskTier: 4 })])).toEqual([]);
  });
});
