import { Logger } from '@nestjs/common';
import type { PamConfigService } from '../config/pam-config.service';
import { compileRules, PamRuleCompileError, type CompiledRuleSet } from '../rules/engine/rule-engine';
import type { Observation } from '../rules/engine/rule.types';
import type { PamRuleSetCacheService } from '../rules/rule-set-cache.service';
import { DecisionChainService } from './decision-chain.service';
import type { AppliedSoftwarePolicy } from './decision.types';

const ORG = 'org-1';
const SITE = 'site-1';
const at = new Date('2025-06-01T12:00:00Z');
const prompt: Observation = { flowType: 'uac_intercept', path: 'C:\\Tools\\fix.exe', signer: 'Contoso Ltd', at };

function service(rules: () => Promise<CompiledRuleSet>, verdict: 'require_approval' | 'auto_deny' = 'require_approval') {
  const settingsFor = jest.fn(async (orgId: string) => ({ orgId, defaultUnmatchedVerdict: verdict, defaultApprovalDurationMinutes: 30 }));
  const get = jest.fn(rules);
  const chain = new DecisionChainService({ get } as unknown as PamRuleSetCacheService, { settingsFor } as unknown as PamConfigService);
  return { chain, settingsFor, get };
}

function blocklist(updatedAt: number, entries: unknown[]): AppliedSoftwarePolicy {
  return {
    policyId: 'p1',
    policyName: 'Block',
    policyUpdatedAt: new Date(updatedAt),
    level: 'organization',
    priority: 100,
    assignedAt: new Date(0),
    assignmentId: 'a1',
    settings: { mode: 'blocklist', entries } as AppliedSoftwarePolicy['settings'],
  };
}

const noRules = async () => compileRules([], new Map());

describe('DecisionChainService', () => {
  it('reads the organization default only when the caller did not pass it', async () => {
    const { chain, settingsFor } = service(noRules, 'auto_deny');
    expect((await chain.decide(ORG, SITE, prompt)).outcome).toBe('denied');
    expect(settingsFor).toHaveBeenCalledWith(ORG);
    settingsFor.mockClear();
    const passed = await chain.decide(ORG, SITE, prompt, { defaults: { defaultUnmatchedVerdict: 'require_approval', defaultApprovalDurationMinutes: 15 } });
    expect(passed.outcome).toBe('pending');
    expect(settingsFor).not.toHaveBeenCalled();
  });

  it('records a rule set that cannot be compiled as pending, even under auto_deny', async () => {
    const { chain } = service(async () => {
      throw new PamRuleCompileError('r1', 'bad time zone');
    }, 'auto_deny');
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      expect(await chain.decide(ORG, SITE, prompt)).toMatchObject({ outcome: 'pending', source: null, error: expect.stringContaining('r1') });
      expect(warned).toHaveBeenCalledWith(expect.stringMatching(/^PAM evaluator failed for organization .*, request recorded as pending: .*r1.*bad time zone/));
    } finally {
      warned.mockRestore();
    }
  });

  it('lets a database failure through instead of deciding', async () => {
    const { chain } = service(async () => {
      throw new Error('connection terminated');
    });
    await expect(chain.decide(ORG, SITE, prompt)).rejects.toThrow('connection terminated');
  });

  it('does not read the rules for a JIT request: the organization default decides it', async () => {
    const approveEveryone = async () =>
      compileRules([{ id: 'r1', name: 'All', verdict: 'auto_approve', priority: 1, enabled: true, siteId: null, approvalDurationMinutes: 1440, createdAt: at, matchUser: 'nobody', matchNegate: ['user'] }], new Map());
    const { chain, get } = service(approveEveryone, 'auto_deny');
    const jit: Observation = { flowType: 'tech_jit_admin', user: 'CORP\\ann', at };
    expect(await chain.decide(ORG, SITE, jit)).toMatchObject({ outcome: 'denied', source: 'org_default', rule: null });
    expect(get).not.toHaveBeenCalled();
    expect(await chain.decide(ORG, SITE, { ...prompt, user: 'CORP\\ann' })).toMatchObject({ outcome: 'auto_approved', rule: { id: 'r1' } });
  });

  it('runs the bridge for observed prompts only', async () => {
    const { chain } = service(noRules);
    const software = [blocklist(1, [{ name: 'fix.exe' }])];
    expect((await chain.decide(ORG, SITE, prompt, { software })).outcome).toBe('denied');
    const jit: Observation = { flowType: 'tech_jit_admin', user: 'CORP\\ann', path: 'C:\\Tools\\fix.exe', at };
    expect((await chain.decide(ORG, SITE, jit, { software })).outcome).toBe('pending');
  });

  it('recompiles a software policy when it changes, not before', async () => {
    const { chain } = service(noRules);
    expect((await chain.decide(ORG, SITE, prompt, { software: [blocklist(1, [{ name: 'fix.exe' }])] })).outcome).toBe('denied');
    // Same policy and update time: the compiled copy is reused, whatever settings came with the row.
    expect((await chain.decide(ORG, SITE, prompt, { software: [blocklist(1, [{ name: 'other.exe' }])] })).outcome).toBe('denied');
    expect((await chain.decide(ORG, SITE, prompt, { software: [blocklist(2, [{ name: 'other.exe' }])] })).outcome).toBe('pending');
  });

  it('records a software policy with settings of the wrong shape as pending', async () => {
    const { chain } = service(noRules, 'auto_deny');
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      expect(await chain.decide(ORG, SITE, prompt, { software: [blocklist(3, [{}])] })).toMatchObject({ outcome: 'pending', error: expect.stringContaining('p1') });
      expect(warned).toHaveBeenCalledWith(expect.stringMatching(/^PAM evaluator failed for organization .*, request recorded as pending: software policy p1/));
    } finally {
      warned.mockRestore();
    }
  });
});
