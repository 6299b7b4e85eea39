import { compileRules } from '../rules/engine/rule-engine';
import type { Observation, PamRuleDefinition } from '../rules/engine/rule.types';
import type { AppliedSoftwarePolicy, OrgPamDefaults } from './decision.types';
import { ChainInput, runChain } from './decision-chain.util';
import { compileSoftwarePolicy } from './software-bridge.util';

const SITE_A = '11111111-1111-4111-8111-111111111111';
const SITE_B = '22222222-2222-4222-8222-222222222222';
const HASH = 'cd'.repeat(32);
const defaults: OrgPamDefaults = { defaultUnmatchedVerdict: 'require_approval', defaultApprovalDurationMinutes: 15 };

let seq = 0;
function rule(fields: Partial<PamRuleDefinition>): PamRuleDefinition {
  seq += 1;
  return {
    id: `rule-${String(seq).padStart(4, '0')}`,
    name: `rule ${seq}`,
    verdict: 'auto_approve',
    priority: 100,
    enabled: true,
    siteId: null,
    approvalDurationMinutes: null,
    createdAt: new Date('2025-01-01T00:00:00Z'),
    matchPathGlob: 'C:\\Tools\\**',
    ...fields,
  };
}

function observe(fields: Partial<Observation> = {}): Observation {
  return { flowType: 'uac_intercept', siteId: SITE_A, path: 'C:\\Tools\\fix.exe', hash: HASH, signer: 'Contoso Ltd', user: 'CORP\\ann', at: new Date('2025-03-03T10:00:00Z'), ...fields };
}

function software(mode: 'allowlist' | 'blocklist' | 'audit', entries: object[], name: string = mode): AppliedSoftwarePolicy {
  return { policyId: `p-${name}`, policyName: name, policyUpdatedAt: new Date(0), level: 'site', priority: 1, assignedAt: new Date(0), assignmentId: name, settings: { mode, entries } };
}

function chain(rules: PamRuleDefinition[], o: Partial<ChainInput> = {}, obs: Partial<Observation> = {}) {
  return runChain({ observation: observe(obs), software: null, rules: { ok: true, value: compileRules(rules, new Map()) }, defaults, ...o });
}
const bridgeOf = (...p: AppliedSoftwarePolicy[]) => ({ ok: true as const, value: p.map(compileSoftwarePolicy) });

describe('decision chain', () => {
  it('lets a software blocklist deny before any rule, and an allowlist approve for 15 minutes', () => {
    const approveAll = rule({ verdict: 'auto_approve', approvalDurationMinutes: 60 });
    const denied = chain([approveAll], { software: bridgeOf(software('blocklist', [{ name: 'fix.exe' }])) });
    expect(denied).toMatchObject({ outcome: 'denied', source: 'software_policy', rule: null, policy: { name: 'blocklist' }, durationMinutes: null });
    const allowed = chain([rule({ verdict: 'auto_deny' })], { software: bridgeOf(software('allowlist', [{ sha256: HASH }])) });
    expect(allowed).toMatchObject({ outcome: 'auto_approved', source: 'software_policy', rule: null, durationMinutes: 15 });
  });

  it('runs the rules after an audit-only bridge, keeping the evidence', () => {
    const d = chain([rule({ verdict: 'auto_deny', name: 'No tools' })], { software: bridgeOf(software('audit', [{ signer: 'contoso ltd' }], 'Watch')) });
    expect(d).toMatchObject({ outcome: 'denied', source: 'pam_rule', rule: { name: 'No tools' }, policy: { name: 'Watch' } });
    expect(d.evidence).toHaveLength(1);
  });

  it('takes the first rule by priority, then creation time, then id', () => {
    const late = rule({ verdict: 'auto_deny', priority: 5, createdAt: new Date('2025-02-01T00:00:00Z') });
    const early = rule({ verdict: 'require_approval', priority: 5, createdAt: new Date('2025-01-01T00:00:00Z') });
    const first = rule({ verdict: 'auto_approve', priority: 1 });
    expect(chain([late, early, first]).rule?.id).toBe(first.id);
    expect(chain([late, early]).rule?.id).toBe(early.id);
    const same = new Date('2025-01-05T00:00:00Z');
    const b = rule({ id: 'rule-b', verdict: 'auto_deny', priority: 5, createdAt: same });
    const a = rule({ id: 'rule-a', verdict: 'require_approval', priority: 5, createdAt: same });
    expect(chain([b, a]).rule?.id).toBe('rule-a');
  });

  it('turns each rule verdict into its outcome, with the rule window or the organization default window', () => {
    expect(chain([rule({ verdict: 'auto_approve', approvalDurationMinutes: 90 })])).toMatchObject({ outcome: 'auto_approved', durationMinutes: 90 });
    expect(chain([rule({ verdict: 'auto_approve' })], { defaults: { ...defaults, defaultApprovalDurationMinutes: 45 } })).toMatchObject({ outcome: 'auto_approved', durationMinutes: 45 });
    expect(chain([rule({ verdict: 'auto_deny' })])).toMatchObject({ outcome: 'denied', source: 'pam_rule' });
    expect(chain([rule({ verdict: 'require_approval' })])).toMatchObject({ outcome: 'pending', source: 'pam_rule' });
    expect(chain([rule({ verdict: 'ignore' })])).toMatchObject({ outcome: 'ignored', source: 'pam_rule' });
  });

  it('decides a JIT request by the organization default alone, whatever rule would match its user', () => {
    const jit = { flowType: 'tech_jit_admin' as const, path: null, hash: null, signer: null };
    for (const verdict of ['auto_approve', 'auto_deny', 'ignore', 'require_approval'] as const) {
      const byName = rule({ verdict, matchPathGlob: null, matchUser: 'CORP\\ann', approvalDurationMinutes: 1440 });
      const negated = rule({ verdict, matchPathGlob: null, matchUser: 'CORP\\intern', matchNegate: ['user'] });
      expect(chain([byName, negated], {}, jit)).toMatchObject({ outcome: 'pending', source: 'org_default', rule: null, durationMinutes: null });
      expect(chain([byName, negated], { defaults: { ...defaults, defaultUnmatchedVerdict: 'auto_deny' } }, jit)).toMatchObject({ outcome: 'denied', source: 'org_default', rule: null });
    }
  });

  it('does not let rules that fail to compile, or are not even read, change a JIT decision', () => {
    const jit = observe({ flowType: 'tech_jit_admin', path: null });
    const autoDeny = { ...defaults, defaultUnmatchedVerdict: 'auto_deny' as const };
    expect(runChain({ observation: jit, software: null, rules: { ok: false, error: 'rule x cannot be compiled' }, defaults: autoDeny })).toMatchObject({ outcome: 'denied', source: 'org_default' });
    expect(runChain({ observation: jit, software: null, rules: null, defaults })).toMatchObject({ outcome: 'pending', source: 'org_default', error: null });
  });

  it('records an observed prompt as pending when its rules were not read', () => {
    const autoDeny = { ...defaults, defaultUnmatchedVerdict: 'auto_deny' as const };
    expect(runChain({ observation: observe(), software: null, rules: null, defaults: autoDeny })).toMatchObject({ outcome: 'pending', source: null });
  });

  it('applies site-scoped rules only on their site', () => {
    const siteRule = rule({ verdict: 'auto_deny', siteId: SITE_B });
    expect(chain([siteRule])).toMatchObject({ outcome: 'pending', source: 'org_default' });
    expect(chain([siteRule], {}, { siteId: SITE_B })).toMatchObject({ outcome: 'denied', rule: { id: siteRule.id } });
  });

  it('falls back to the organization default verdict', () => {
    expect(chain([])).toMatchObject({ outcome: 'pending', source: 'org_default', rule: null });
    expect(chain([], { defaults: { ...defaults, defaultUnmatchedVerdict: 'auto_deny' } })).toMatchObject({ outcome: 'denied', source: 'org_default' });
  });

  it('records an evaluator failure as pending, even when the default would deny or a policy would approve', () => {
    const autoDeny = { ...defaults, defaultUnmatchedVerdict: 'auto_deny' as const };
    const broken = runChain({ observation: observe(), software: null, rules: { ok: false, error: 'rule x cannot be compiled' }, defaults: autoDeny });
    expect(broken).toEqual({ outcome: 'pending', source: null, rule: null, policy: null, durationMinutes: null, evidence: [], error: 'rule x cannot be compiled' });
    const badPolicy = runChain({ observation: observe(), software: { ok: false, error: 'bad policy' }, rules: { ok: true, value: compileRules([], new Map()) }, defaults: autoDeny });
    expect(badPolicy).toMatchObject({ outcome: 'pending', error: 'bad policy' });
    const exploding = {
      rules: [],
      get byFlow(): never {
        throw new Error('evaluator exploded');
      },
    };
    expect(runChain({ observation: observe(), software: null, rules: { ok: true, value: exploding as never }, defaults: autoDeny })).toMatchObject({
      outcome: 'pending',
      source: null,
      error: 'evaluator exploded',
    });
  });

  it('decides tool actions only through tool-action rules and the default', () => {
    const exeRule = rule({ verdict: 'auto_approve', matchPathGlob: null, matchUser: 'CORP\\ann' });
    const toolRule = rule({ verdict: 'auto_deny', matchPathGlob: null, matchToolName: 'run_script', matchRiskTier: 4 });
    const tool = { flowType: 'ai_tool_action' as const, path: null, hash: null, signer: null, toolName: 'run_script', riskTier: 4 };
    expect(chain([exeRule, toolRule], {}, tool)).toMatchObject({ outcome: 'denied', rule: { id: toolRule.id } });
    expect(chain([exeRule], {}, tool)).toMatchObject({ outcome: 'pending', source: 'org_default' });
  });
});
