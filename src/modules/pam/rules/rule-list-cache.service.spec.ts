import { PamRuleListCacheService, RULE_LIST_CACHE_SIZE } from './rule-list-cache.service';
import { pamRuleRow } from '../../../../test/factories/pam-rule-row.factory';

const row = (orgId: string, name: string) => pamRuleRow({ org_id: orgId, name, match_signer: 'Acme' });

const ORG_A = '00000000-0000-4000-8000-00000000000a';
const ORG_B = '00000000-0000-4000-8000-00000000000b';


/** In-memory stand-ins for the version and rule repositories, counting what they are asked. */
function world() {
  const state = {
    versions: new Map<string, string>([[ORG_A, '1']]),
    rows: [row(ORG_A, '1'), row(ORG_B, '2')],
    loadedOrgs: [] as string[][],
  };
  const versions = { currentOf: jest.fn(async (ids: readonly string[]) => new Map(ids.map((id) => [id, state.versions.get(id) ?? '0']))) };
  const rules = {
    listOf: jest.fn(async (ids: readonly string[]) => {
      state.loadedOrgs.push([...ids]);
      return state.rows.filter((r) => ids.includes(r.org_id));
    }),
  };
  return { state, cache: new PamRuleListCacheService(versions as never, rules as never) };
}

describe('PamRuleListCacheService', () => {
  it('reads the rules of an organization once per rules version', async () => {
    const { state, cache } = world();
    expect((await cache.rulesOf([ORG_A])).map((r) => r.name)).toEqual(['1']);
    expect((await cache.rulesOf([ORG_A])).map((r) => r.name)).toEqual(['1']);
    expect(state.loadedOrgs).toEqual([[ORG_A]]);
  });

  it('reads the rules again once the version moved, and returns the new ones', async () => {
    const { state, cache } = world();
    await cache.rulesOf([ORG_A]);
    state.rows = [row(ORG_A, '1'), row(ORG_A, '3')];
    state.versions.set(ORG_A, '2');
    expect((await cache.rulesOf([ORG_A])).map((r) => r.name)).toEqual(['1', '3']);
    expect(state.loadedOrgs).toHaveLength(2);
  });

  it('reloads only the organizations whose version moved and orders the result by organization id', async () => {
    const { state, cache } = world();
    await cache.rulesOf([ORG_B, ORG_A]);
    state.versions.set(ORG_B, '5');
    expect((await cache.rulesOf([ORG_B, ORG_A])).map((r) => r.orgId)).toEqual([ORG_A, ORG_B]);
    expect(state.loadedOrgs).toEqual([[ORG_B, ORG_A], [ORG_B]]);
  });

  it('remembers an organization without rules as an empty list', async () => {
    const { state, cache } = world();
    state.rows = [];
    expect(await cache.rulesOf([ORG_A])).toEqual([]);
    expect(await cache.rulesOf([ORG_A])).toEqual([]);
    expect(state.loadedOrgs).toHaveLength(1);
  });

  it('hands out frozen rule objects, so no caller can change what the next one receives', async () => {
    const { cache } = world();
    const [rule] = await cache.rulesOf([ORG_A]);
    expect(Object.isFrozen(rule)).toBe(true);
  });

  it('keeps at most its size in organizations, dropping the least recently listed', async () => {
    const { cache } = world();
    const ids = Array.from({ length: RULE_LIST_CACHE_SIZE + 5 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const id of ids) await cache.rulesOf([id]);
    expect(cache.size).toBe(RULE_LIST_CACHE_SIZE);
  });

  it('asks nothing for an empty organization list', async () => {
    const { state, cache } = world();
    expect(await cache.rulesOf([])).toEqual([]);
    expect(state.loadedOrgs).toEqual([]);
  });
});
