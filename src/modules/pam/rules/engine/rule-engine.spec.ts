import fc from 'fast-check';
import {
  compileRule,
  compileRules,
  evaluate,
  isRuleGovernedFlow,
  matchesPrepared,
  matchesRule,
  PamRuleCompileError,
  prepareObservation,
} from './rule-engine';
import type { FlowType, NegatableKey, Observation, PamRuleDefinition, PamTimeWindow } from './rule.types';

const SITE_A = '0b6f8a52-3c1d-4e8e-9a43-5f2d1c7b9e01';
const SITE_B = '7d2e4f60-91ab-4c3d-8e5f-a1b2c3d4e5f6';
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
const GROUP = 'c2f0e4d8-7a1b-4f3e-9d6c-5b8a7e6d4c3b';

let sequence = 0;
function rule(fields: Partial<PamRuleDefinition> = {}): PamRuleDefinition {
  sequence += 1;
  return {
    id: `rule-${String(sequence).padStart(4, '0')}`,
    name: `rule ${sequence}`,
    verdict: 'auto_approve',
    priority: 100,
    enabled: true,
    siteId: null,
    approvalDurationMinutes: null,
    createdAt: new Date('2025-01-01T00:00:00Z'),
    ...fields,
  };
}

function observe(fields: Partial<Observation> = {}): Observation {
  return {
    flowType: 'uac_intercept',
    siteId: SITE_A,
    signer: 'Acme Software Ltd',
    hash: HASH_A,
    path: 'C:\\Program Files\\Acme\\setup.exe',
    parentImage: 'C:\\Windows\\explorer.exe',
    commandLine: 'setup.exe /S --install-dir="C:\\Acme"',
    user: 'CORP\\alice',
    adGroups: ['Domain Users', 'Helpdesk'],
    at: new Date('2025-01-15T12:00:00Z'),
    ...fields,
  };
}

function toolObservation(fields: Partial<Observation> = {}): Observation {
  return observe({
    flowType: 'ai_tool_action',
    signer: null,
    hash: null,
    path: null,
    parentImage: null,
    commandLine: null,
    toolName: 'run_script',
    riskTier: 3,
    ...fields,
  });
}

const groups = new Map([[GROUP, ['Acme Software Ltd', 'Contoso Inc']]]);

function matches(definition: PamRuleDefinition, observation: Observation): boolean {
  return matchesRule(compileRule(definition, groups), observation);
}

describe('matchesRule', () => {
  describe('exact criteria', () => {
    it('matches the signer exactly, ignoring ASCII case', () => {
      expect(matches(rule({ matchSigner: 'ACME software ltd' }), observe())).toBe(true);
      expect(matches(rule({ matchSigner: 'Acme Software' }), observe())).toBe(false);
      expect(matches(rule({ matchSigner: 'Acme Software Ltd ' }), observe())).toBe(false);
    });

    it('matches the hash exactly, ignoring case', () => {
      expect(matches(rule({ matchHash: HASH_A.toUpperCase() }), observe())).toBe(true);
      expect(matches(rule({ matchHash: HASH_B }), observe())).toBe(false);
    });

    it('matches the user exactly, ignoring case', () => {
      expect(matches(rule({ matchUser: 'corp\\ALICE' }), observe())).toBe(true);
      expect(matches(rule({ matchUser: 'alice' }), observe())).toBe(false);
    });

    it('matches the tool name exactly, ignoring case', () => {
      expect(matches(rule({ matchToolName: 'RUN_SCRIPT' }), toolObservation())).toBe(true);
      expect(matches(rule({ matchToolName: 'run' }), toolObservation())).toBe(false);
    });

    it('matches the risk tier by equality, tier 0 included', () => {
      expect(matches(rule({ matchRiskTier: 3 }), toolObservation())).toBe(true);
      expect(matches(rule({ matchRiskTier: 4 }), toolObservation())).toBe(false);
      expect(matches(rule({ matchRiskTier: 0 }), toolObservation({ riskTier: 0 }))).toBe(true);
      expect(matches(rule({ matchRiskTier: 2 }), toolObservation({ riskTier: 3 }))).toBe(false);
    });

    it('does not fold letters outside ASCII', () => {
      expect(matches(rule({ matchSigner: 'ÉDITEUR' }), observe({ signer: 'éditeur' }))).toBe(false);
      expect(matches(rule({ matchSigner: 'Éditeur' }), observe({ signer: 'ÉDITEUR' }))).toBe(true);
    });
  });

  describe('other criteria', () => {
    it('matches the command line by case-insensitive substring', () => {
      expect(matches(rule({ matchCommandLine: '/s --INSTALL' }), observe())).toBe(true);
      expect(matches(rule({ matchCommandLine: '--uninstall' }), observe())).toBe(false);
    });

    it('matches a directory group when any of the observed groups equals it, ignoring case', () => {
      expect(matches(rule({ matchAdGroup: 'helpdesk' }), observe())).toBe(true);
      expect(matches(rule({ matchAdGroup: 'Help' }), observe())).toBe(false);
    });

    it('matches a signer group when the signer is a member, ignoring case', () => {
      expect(matches(rule({ matchSignerGroupId: GROUP }), observe({ signer: 'CONTOSO INC' }))).toBe(true);
      expect(matches(rule({ matchSignerGroupId: GROUP }), observe({ signer: 'Fabrikam' }))).toBe(false);
    });

    it('matches the path and the parent image by glob', () => {
      expect(matches(rule({ matchPathGlob: 'c:/program files/**/*.EXE' }), observe())).toBe(true);
      expect(matches(rule({ matchPathGlob: 'C:\\Program Files\\*.exe' }), observe())).toBe(false);
      expect(matches(rule({ matchParentImage: '**\\explorer.exe' }), observe())).toBe(true);
      expect(matches(rule({ matchParentImage: '**\\cmd.exe' }), observe())).toBe(false);
    });

    it('requires every set criterion to hold', () => {
      expect(matches(rule({ matchSigner: 'Acme Software Ltd', matchUser: 'CORP\\alice' }), observe())).toBe(true);
      expect(matches(rule({ matchSigner: 'Acme Software Ltd', matchUser: 'CORP\\bob' }), observe())).toBe(false);
      expect(matches(rule({ matchToolName: 'run_script', matchRiskTier: 4 }), toolObservation())).toBe(false);
    });

    it('treats blank criteria as unset', () => {
      expect(matches(rule({ matchSigner: 'Acme Software Ltd', matchUser: '  ', matchHash: '' }), observe())).toBe(true);
    });
  });

  describe('missing data', () => {
    it.each<[string, Partial<PamRuleDefinition>, Partial<Observation>]>([
      ['signer', { matchSigner: 'Acme Software Ltd' }, { signer: null }],
      ['signer group', { matchSignerGroupId: GROUP }, { signer: '' }],
      ['hash', { matchHash: HASH_A }, { hash: undefined }],
      ['path', { matchPathGlob: '**' }, { path: '' }],
      ['parent image', { matchParentImage: '**' }, { parentImage: null }],
      ['command line', { matchCommandLine: 'setup' }, { commandLine: '' }],
      ['user', { matchUser: 'CORP\\alice' }, { user: null }],
      ['directory group', { matchAdGroup: 'Helpdesk' }, { adGroups: [] }],
    ])('never lets a %s criterion match an observation without that value', (_label, criteria, missing) => {
      expect(matches(rule(criteria), observe(missing))).toBe(false);
    });

    it('treats absent directory groups and groups that are all blank as missing', () => {
      expect(matches(rule({ matchAdGroup: 'Helpdesk' }), observe({ adGroups: null }))).toBe(false);
      expect(matches(rule({ matchAdGroup: 'x', matchNegate: ['adGroup'] }), observe({ adGroups: [''] }))).toBe(false);
    });

    it('never lets a tool criterion match without the tool name or tier', () => {
      expect(matches(rule({ matchToolName: 'run_script' }), toolObservation({ toolName: null }))).toBe(false);
      expect(matches(rule({ matchRiskTier: 3 }), toolObservation({ riskTier: null }))).toBe(false);
      expect(matches(rule({ matchRiskTier: 3 }), toolObservation({ riskTier: Number.NaN }))).toBe(false);
    });
  });

  describe('negation', () => {
    it('inverts a criterion when the value is present', () => {
      expect(matches(rule({ matchSigner: 'Contoso', matchNegate: ['signer'] }), observe())).toBe(true);
      expect(matches(rule({ matchSigner: 'acme software ltd', matchNegate: ['signer'] }), observe())).toBe(false);
      expect(matches(rule({ matchAdGroup: 'Admins', matchNegate: ['adGroup'] }), observe())).toBe(true);
      expect(matches(rule({ matchAdGroup: 'helpdesk', matchNegate: ['adGroup'] }), observe())).toBe(false);
      expect(matches(rule({ matchRiskTier: 4, matchNegate: ['riskTier'] }), toolObservation())).toBe(true);
      expect(matches(rule({ matchSignerGroupId: GROUP, matchNegate: ['signerGroup'] }), observe({ signer: 'X' }))).toBe(
        true,
      );
      expect(matches(rule({ matchPathGlob: '**\\*.msi', matchNegate: ['pathGlob'] }), observe())).toBe(true);
      expect(matches(rule({ matchCommandLine: '/S', matchNegate: ['commandLine'] }), observe())).toBe(false);
    });

    it.each<[string, Partial<PamRuleDefinition>, Partial<Observation>]>([
      ['signer', { matchSigner: 'Contoso', matchNegate: ['signer'] }, { signer: null }],
      ['signer group', { matchSignerGroupId: GROUP, matchNegate: ['signerGroup'] }, { signer: null }],
      ['hash', { matchHash: HASH_B, matchNegate: ['hash'] }, { hash: '' }],
      ['path', { matchPathGlob: '**\\*.msi', matchNegate: ['pathGlob'] }, { path: null }],
      ['parent image', { matchParentImage: 'x', matchNegate: ['parentImage'] }, { parentImage: '' }],
      ['command line', { matchCommandLine: 'x', matchNegate: ['commandLine'] }, { commandLine: null }],
      ['user', { matchUser: 'CORP\\bob', matchNegate: ['user'] }, { user: '' }],
      ['directory group', { matchAdGroup: 'Admins', matchNegate: ['adGroup'] }, { adGroups: [] }],
    ])('never turns a missing %s into a match (spec P4.2 rule 4)', (_label, criteria, missing) => {
      expect(matches(rule(criteria), observe(missing))).toBe(false);
    });

    it('never turns a missing tool name or tier into a match', () => {
      const negatedTool = rule({ matchToolName: 'read_file', matchNegate: ['toolName'] });
      expect(matches(negatedTool, toolObservation({ toolName: null }))).toBe(false);
      const negatedTier = rule({ matchRiskTier: 0, matchNegate: ['riskTier'] });
      expect(matches(negatedTier, toolObservation({ riskTier: null }))).toBe(false);
    });

    it('inverts only the named criteria', () => {
      const definition = rule({ matchSigner: 'Contoso', matchUser: 'CORP\\alice', matchNegate: ['signer'] });
      expect(matches(definition, observe())).toBe(true);
      expect(matches(definition, observe({ user: 'CORP\\bob' }))).toBe(false);
    });
  });

  describe('site', () => {
    it('applies a site rule to that site only', () => {
      expect(matches(rule({ siteId: SITE_A, matchSigner: 'Acme Software Ltd' }), observe())).toBe(true);
      expect(matches(rule({ siteId: SITE_A.toUpperCase(), matchSigner: 'Acme Software Ltd' }), observe())).toBe(true);
      expect(matches(rule({ siteId: SITE_B, matchSigner: 'Acme Software Ltd' }), observe())).toBe(false);
      expect(matches(rule({ siteId: SITE_A, matchSigner: 'Acme Software Ltd' }), observe({ siteId: null }))).toBe(
        false,
      );
    });

    it('applies an organization-wide rule to every site and to requests without one', () => {
      expect(matches(rule({ matchSigner: 'Acme Software Ltd' }), observe({ siteId: SITE_B }))).toBe(true);
      expect(matches(rule({ matchSigner: 'Acme Software Ltd' }), observe({ siteId: null }))).toBe(true);
    });
  });

  describe('flow types', () => {
    it('applies executable rules to UAC prompts only, never to JIT admin requests or tool actions', () => {
      const definition = rule({ matchSigner: 'Acme Software Ltd' });
      expect(matches(definition, observe({ flowType: 'uac_intercept' }))).toBe(true);
      expect(matches(definition, observe({ flowType: 'tech_jit_admin' }))).toBe(false);
      expect(matches(definition, observe({ flowType: 'ai_tool_action', toolName: 'run_script' }))).toBe(false);
    });

    it('applies tool-action rules to tool actions only', () => {
      const definition = rule({ matchToolName: 'run_script' });
      expect(matches(definition, toolObservation())).toBe(true);
      expect(matches(definition, toolObservation({ flowType: 'uac_intercept' }))).toBe(false);
      expect(matches(definition, toolObservation({ flowType: 'tech_jit_admin' }))).toBe(false);
    });

    it('keeps rules on user or directory group alone on UAC prompts, away from JIT requests and tool actions', () => {
      const definition = rule({ matchUser: 'CORP\\alice' });
      expect(matches(definition, observe({ flowType: 'uac_intercept' }))).toBe(true);
      expect(matches(definition, observe({ flowType: 'tech_jit_admin' }))).toBe(false);
      expect(matches(definition, toolObservation())).toBe(false);
    });

    it('gives a JIT request no rule at all: the compiled set has no partition for it', () => {
      const negatedUser = rule({ verdict: 'auto_approve', matchUser: 'CORP\\intern', matchNegate: ['user'] });
      const set = compileRules([negatedUser, rule({ matchSigner: 'Acme Software Ltd' }), rule({ matchToolName: 'run_script' })], new Map());
      expect(Object.keys(set.byFlow).sort()).toEqual(['ai_tool_action', 'uac_intercept']);
      expect(evaluate(set, observe({ flowType: 'tech_jit_admin' }))).toBeNull();
      expect(evaluate(set, observe({ flowType: 'uac_intercept' }))?.rule).toBe(negatedUser);
      expect(isRuleGovernedFlow('tech_jit_admin')).toBe(false);
      expect(isRuleGovernedFlow('uac_intercept')).toBe(true);
      expect(isRuleGovernedFlow('ai_tool_action')).toBe(true);
    });

    it('matches nothing for an unknown flow type', () => {
      expect(matches(rule({ matchUser: 'CORP\\alice' }), observe({ flowType: 'other' as FlowType }))).toBe(false);
    });
  });

  describe('time window', () => {
    it('reads the window at the observation time', () => {
      const definition = rule({
        matchSigner: 'Acme Software Ltd',
        timeWindow: { start: '09:00', end: '17:00', days: [1, 2, 3, 4, 5], timezone: 'America/Chicago' },
      });
      // Wednesday 2025-01-15: 12:00 UTC is 06:00 in Chicago, 15:00 UTC is 09:00.
      expect(matches(definition, observe({ at: new Date('2025-01-15T12:00:00Z') }))).toBe(false);
      expect(matches(definition, observe({ at: new Date('2025-01-15T15:00:00Z') }))).toBe(true);
      // Saturday 2025-01-18.
      expect(matches(definition, observe({ at: new Date('2025-01-18T15:00:00Z') }))).toBe(false);
    });

    it('uses each rule zone for the same observation', () => {
      const at = new Date('2025-01-15T04:00:00Z');
      const india = rule({ matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '10:00', timezone: 'Asia/Kolkata' } });
      const utc = rule({ matchUser: 'CORP\\alice', timeWindow: { start: '09:00', end: '10:00' } });
      const prepared = prepareObservation(observe({ at }));
      expect(matchesPrepared(compileRule(india, groups), prepared)).toBe(true);
      expect(matchesPrepared(compileRule(utc, groups), prepared)).toBe(false);
    });
  });
});

describe('compileRule', () => {
  it('refuses a rule whose signer group is unknown rather than treating it as empty', () => {
    const definition = rule({ matchSignerGroupId: 'missing', matchNegate: ['signerGroup'] });
    expect(() => compileRule(definition, groups)).toThrow(PamRuleCompileError);
    expect(() => compileRule(definition, groups)).toThrow(/signer group missing is unknown/);
  });

  it('refuses a rule with an invalid time window, naming the rule', () => {
    const definition = rule({ matchSigner: 'x', timeWindow: { start: '9:00', end: '17:00' } });
    let error: unknown;
    try {
      compileRule(definition, groups);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PamRuleCompileError);
    expect((error as PamRuleCompileError).ruleId).toBe(definition.id);
  });
});

describe('compileRules and evaluate', () => {
  it('returns the first matching rule by priority, then createdAt, then id', () => {
    const early = new Date('2024-01-01T00:00:00Z');
    const late = new Date('2024-06-01T00:00:00Z');
    const rules = [
      rule({ id: 'b', priority: 10, createdAt: early, matchUser: 'CORP\\alice' }),
      rule({ id: 'a', priority: 10, createdAt: late, matchUser: 'CORP\\alice' }),
      rule({ id: 'c', priority: 10, createdAt: early, matchUser: 'CORP\\alice' }),
      rule({ id: 'd', priority: 20, createdAt: early, matchUser: 'CORP\\alice' }),
    ];
    const set = compileRules(rules, groups);
    expect(set.rules.map((compiled) => compiled.rule.id)).toEqual(['b', 'c', 'a', 'd']);
    expect(evaluate(set, observe())?.rule.id).toBe('b');
  });

  it('lets a lower priority number win over an earlier position in the input', () => {
    const rules = [
      rule({ id: 'deny', priority: 50, verdict: 'auto_deny', matchSigner: 'Acme Software Ltd' }),
      rule({ id: 'approve', priority: 5, verdict: 'auto_approve', matchPathGlob: '**\\setup.exe' }),
    ];
    expect(evaluate(compileRules(rules, groups), observe())?.rule).toBe(rules[1]);
  });

  it('skips rules that do not match and returns null when none does', () => {
    const rules = [rule({ priority: 1, matchSigner: 'Contoso' }), rule({ priority: 2, matchHash: HASH_A })];
    const set = compileRules(rules, groups);
    expect(evaluate(set, observe())?.rule).toBe(rules[1]);
    expect(evaluate(set, observe({ hash: HASH_B }))).toBeNull();
  });

  it('drops disabled rules, even ones that could not be compiled', () => {
    const rules = [
      rule({ priority: 1, enabled: false, matchSigner: 'Acme Software Ltd' }),
      rule({ priority: 2, enabled: false, matchSignerGroupId: 'missing' }),
      rule({ priority: 3, matchSigner: 'Acme Software Ltd' }),
    ];
    const set = compileRules(rules, groups);
    expect(set.rules).toHaveLength(1);
    expect(evaluate(set, observe())?.rule).toBe(rules[2]);
  });

  it('throws for an enabled rule that cannot be compiled, so the caller records the request as pending', () => {
    expect(() => compileRules([rule({ matchSignerGroupId: 'missing' })], groups)).toThrow(PamRuleCompileError);
  });

  it('returns null for an empty rule set', () => {
    expect(evaluate(compileRules([], groups), observe())).toBeNull();
  });

  it('evaluates tool actions against tool-action rules only', () => {
    const rules = [
      rule({ priority: 1, matchUser: 'CORP\\alice' }),
      rule({ priority: 2, matchRiskTier: 3, verdict: 'require_approval' }),
    ];
    expect(evaluate(compileRules(rules, groups), toolObservation())?.rule).toBe(rules[1]);
  });

  it('finds rules filed under a path segment, the last segment, or nothing', () => {
    const rules = [
      rule({ priority: 1, matchPathGlob: 'C:\\Program Files\\Other\\*.exe' }),
      rule({ priority: 2, matchPathGlob: 'C:\\*\\Acme\\*.exe', matchNegate: ['pathGlob'] }),
      rule({ priority: 3, matchPathGlob: '**\\SETUP.exe' }),
      rule({ priority: 4, matchPathGlob: 'C:\\Program Files\\Acme\\*.exe' }),
    ];
    const set = compileRules(rules, groups);
    expect(evaluate(set, observe())?.rule).toBe(rules[2]);
    expect(evaluate(set, observe({ path: 'C:\\Program Files\\Acme\\run.exe' }))?.rule).toBe(rules[3]);
    expect(evaluate(set, observe({ path: 'D:\\Program Files\\Acme\\run.exe' }))?.rule).toBe(rules[1]);
  });

  it('returns the same answer as a scan of every rule in order', () => {
    const negatableKeys: NegatableKey[] = [
      'signer',
      'signerGroup',
      'hash',
      'pathGlob',
      'parentImage',
      'commandLine',
      'user',
      'adGroup',
      'toolName',
      'riskTier',
    ];
    // Each criterion is set in one draft out of five, so that rules are narrow enough to miss and broad enough to match.
    const maybe = <T>(arb: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: fc.constant(undefined), weight: 4 }, { arbitrary: arb, weight: 1 });
    const ruleArb = fc.record({
      priority: fc.integer({ min: 0, max: 3 }),
      createdAt: fc.constantFrom(new Date('2024-01-01T00:00:00Z'), new Date('2024-02-01T00:00:00Z')),
      enabled: fc.boolean(),
      siteId: fc.constantFrom(null, SITE_A, SITE_B),
      matchSigner: maybe(fc.constantFrom('Acme Software Ltd', 'CONTOSO INC', 'Fabrikam')),
      matchSignerGroupId: maybe(fc.constant(GROUP)),
      matchHash: maybe(fc.constantFrom(HASH_A, HASH_B)),
      matchPathGlob: maybe(
        fc.constantFrom('C:\\Program Files\\Acme\\*.exe', '**\\setup.exe', 'C:\\**', 'C:\\*\\Acme\\**', '*:\\**\\*.exe'),
      ),
      matchParentImage: maybe(fc.constantFrom('**\\explorer.exe', 'C:\\Windows\\*', 'cmd.exe')),
      matchCommandLine: maybe(fc.constantFrom('/s', '--quiet')),
      matchUser: maybe(fc.constantFrom('CORP\\alice', 'corp\\bob')),
      matchAdGroup: maybe(fc.constantFrom('Helpdesk', 'Admins')),
      matchToolName: maybe(fc.constantFrom('run_script', 'READ_FILE')),
      matchRiskTier: maybe(fc.integer({ min: 0, max: 4 })),
      matchNegate: maybe(fc.subarray(negatableKeys, { maxLength: 2 })),
      timeWindow: maybe(fc.constantFrom<PamTimeWindow>({ start: '09:00', end: '17:00' }, { start: '22:00', end: '06:00', days: [3] })),
    });
    const observationArb = fc.record({
      flowType: fc.constantFrom<FlowType>('uac_intercept', 'tech_jit_admin', 'ai_tool_action'),
      siteId: fc.constantFrom(null, SITE_A, SITE_B.toUpperCase()),
      signer: fc.constantFrom(null, '', 'acme software ltd', 'Contoso Inc', 'Other'),
      hash: fc.constantFrom(null, HASH_A, HASH_B.toUpperCase()),
      path: fc.constantFrom(null, 'C:\\Program Files\\Acme\\setup.exe', 'c:/program files/acme/run.exe', 'D:\\setup.exe'),
      parentImage: fc.constantFrom(null, 'C:\\Windows\\explorer.exe', 'cmd.exe'),
      commandLine: fc.constantFrom(null, 'setup.exe /S', 'run --QUIET'),
      user: fc.constantFrom(null, 'CORP\\Alice', 'corp\\bob'),
      adGroups: fc.constantFrom([], ['helpdesk'], ['Admins', 'Other']),
      toolName: fc.constantFrom(null, 'run_script', 'read_file'),
      riskTier: fc.constantFrom(null, 0, 3, 4),
      at: fc.constantFrom(new Date('2025-01-15T12:00:00Z'), new Date('2025-01-16T03:00:00Z')),
    });
    let matched = 0;
    let matchedBehindOthers = 0;
    fc.assert(
      fc.property(fc.array(ruleArb, { maxLength: 25 }), fc.array(observationArb, { minLength: 1, maxLength: 5 }), (drafts, observations) => {
        const rules = drafts.map((draft, index) => rule({ ...draft, id: `r${String(index).padStart(2, '0')}` }));
        const set = compileRules(rules, groups);
        for (const observation of observations) {
          const expected = set.rules.find((compiled) => matchesRule(compiled, observation))?.rule ?? null;
          if ((evaluate(set, observation)?.rule ?? null) !== expected) return false;
          if (expected !== null) {
            matched += 1;
            if (expected !== set.rules[0].rule) matchedBehindOthers += 1;
          }
        }
        return true;
      }),
      { numRuns: 1500 },
    );
    // The property is only worth something if many observations match, and many match behind another rule. Over 120 seeds
    // the counts were 356 ± 21 and 217 ± 15; the floors sit seven deviations below, so a generator that stopped producing
    // matches fails here while a run with an unlucky seed does not (the old floors of 300 and 150 failed about one run in 250).
    expect(matched).toBeGreaterThan(200);
    expect(matchedBehindOthers).toBeGreaterThan(110);
  });
});
