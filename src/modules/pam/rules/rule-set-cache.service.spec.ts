import { evaluate, PamRuleCompileError } from './engine/rule-engine';
import { PamRuleSetCacheService, RULE_SET_CACHE_SIZE } from './rule-set-cache.service';
import { pamRuleRow as row, RULE_ORG_ID } from '../../../../test/factories/pam-rule-row.factory';

const ORG = RULE_ORG_ID;
const GROUP = '00000000-0000-4000-8000-0000000000f1';


/** In-memory stand-ins for the three repositories the cache reads. */
function world() {
  const state = {
    version: '1',
    rules: [row({ match_signer: 'Acme', name: 'rule' })],
    groups: [] as { id: string; signers: string[] }[],
    loads: 0,
  };
  const versions = { current: jest.fn(async () => state.version) };
  const rules = {
    compileSource: jest.fn(async () => {
      state.loads++;
      return { rules: state.rules, groups: state.groups };
    }),
  };
  const cache = new PamRuleSetCacheService(versions as never, rules as never);
  return { state, cache };
}

const observation = (signer: string) => ({ flowType: 'uac_intercept' as const, signer, at: new Date() });

describe('PamRuleSetCacheService', () => {
  it('compiles the organization rules once per version', async () => {
    const { state, cache } = world();
    const first = await cache.get(ORG);
    const second = await cache.get(ORG);
    expect(second).toBe(first);
    expect(state.loads).toBe(1);
    expect(evaluate(first, observation('ACME'))?.rule.name).toBe('rule');
  });

  it('rebuilds when the rules version moves, and the new rules apply at once', async () => {
    const { state, cache } = world();
    await cache.get(ORG);
    state.rules = [row({ match_signer: 'Contoso', name: 'new' })];
    state.version = '2';
    const set = await cache.get(ORG);
    expect(state.loads).toBe(2);
    expect(evaluate(set, observation('Acme'))).toBeNull();
    expect(evaluate(set, observation('contoso'))?.rule.name).toBe('new');
  });

  it('shares one build between concurrent lookups of the same version', async () => {
    const { state, cache } = world();
    const [a, b, c] = await Promise.all([cache.get(ORG), cache.get(ORG), cache.get(ORG)]);
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(state.loads).toBe(1);
  });

  it('resolves signer groups into the compiled rules', async () => {
    const { state, cache } = world();
    state.rules = [row({ match_signer_group_id: GROUP })];
    state.groups = [{ id: GROUP, signers: ['Acme', 'Contoso Ltd'] }];
    const set = await cache.get(ORG);
    expect(evaluate(set, observation('CONTOSO LTD'))).not.toBeNull();
    expect(evaluate(set, observation('Fabrikam'))).toBeNull();
  });

  it('throws PamRuleCompileError for a rule that cannot compile and caches nothing', async () => {
    const { state, cache } = world();
    state.rules = [row({ match_signer_group_id: GROUP })];
    await expect(cache.get(ORG)).rejects.toBeInstanceOf(PamRuleCompileError);
    expect(cache.size).toBe(0);
    state.groups = [{ id: GROUP, signers: ['Acme'] }];
    await expect(cache.get(ORG)).resolves.toBeDefined();
    expect(state.loads).toBe(2);
  });

  it('keeps at most RULE_SET_CACHE_SIZE organizations, dropping the least recently used', async () => {
    const { cache } = world();
    const orgs = Array.from({ length: RULE_SET_CACHE_SIZE + 1 }, (_, i) => `org-${i}`);
    for (const org of orgs) await cache.get(org);
    expect(cache.size).toBe(RULE_SET_CACHE_SIZE);
  });
});
