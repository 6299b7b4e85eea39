import fc from 'fast-check';
import request from 'supertest';
import type { Fixture } from '../../../src/seed/fixture.types';
import { randomToken, tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { PASSWORD, TOTP_SECRET, uniq } from '../../factories/tenant.factory';
import { mayActOn, Reach } from '../../support/person-authority.model';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/**
 * The authorization matrix's target dimension (authorization-matrix.e2e.test.ts covers who may
 * call each route): for generated tenancies — roles with permission subsets, members restricted to
 * sites or not, SCIM connections acting for each of them — every operation that changes a person
 * is allowed, for every (actor, target) pair, exactly when the actor has authority over everything
 * the target holds (test/support/person-authority.model.ts). fast-check shrinks a failure to the
 * smallest tenancy that shows it.
 */
describe('operations on a person are allowed exactly when the actor covers the target', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '0' });
  });
  afterAll(async () => {
    await t.close();
  });

  // Every generated role may call the routes (users:write, organizations:write); what differs is what else it holds.
  const base = ['users:write', 'organizations:read', 'organizations:write'];
  const extra = ['*', 'devices:*', 'devices:read', 'devices:write', 'audit:read', 'pam:read'];
  const person = fc.record({ extra: fc.subarray(extra, { maxLength: 2 }), sites: fc.option(fc.subarray(['s1', 's2'] as const, { minLength: 1 }), { nil: null }) });

  type Person = { extra: string[]; sites: ('s1' | 's2')[] | null };

  async function world(people: Person[]) {
    const label = uniq('m');
    const f: Fixture = {
      partners: [{ key: 'partner', name: `Matrix ${label}` }],
      organizations: [{ key: 'org', partner: 'partner', name: `Org ${label}` }],
      sites: [
        { key: 's1', organization: 'org', name: 'S1' },
        { key: 's2', organization: 'org', name: 'S2' },
      ],
      roles: people.map((p, i) => ({ key: `role${i}`, scope: 'organization' as const, organization: 'org', name: `R${i}`, permissions: [...base, ...p.extra] })),
      users: people.map((p, i) => ({
        key: `u${i}`,
        email: `u${i}@${label}.example`,
        name: `U${i}`,
        password: PASSWORD,
        totpSecret: TOTP_SECRET,
        memberships: [{ organization: 'org', role: `role${i}`, ...(p.sites ? { sites: [...p.sites] } : {}) }],
      })),
    };
    const ids = await t.seed(f);
    const reach = (p: Person): Reach => ({ permissions: [...base, ...p.extra], orgIds: [ids.org], siteIds: p.sites?.map((s) => ids[s]) ?? null });
    // A SCIM connection acting for each person, as if they had made it (site-restricted people cannot make one, but may be restricted after).
    const tokens: string[] = [];
    for (const i of people.keys()) {
      const token = `scim_${randomToken(32)}`;
      await ownerQuery(`INSERT INTO scim_connections (org_id, name, token_prefix, token_hash, acting_user_id, created_by) VALUES ($1, $2, $3, $4, $5, $5)`, [
        ids.org,
        `C${i}`,
        token.slice(5, 13),
        tokenHash(token),
        ids[`u${i}`],
      ]);
      tokens.push(token);
    }
    return { ids, reach, tokens };
  }

  const scimPatch = (token: string, userId: string, body: object) =>
    request(t.http).patch(`/api/v1/scim/v2/Users/${userId}`).set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/scim+json').send(JSON.stringify({ schemas: [PATCH], Operations: [body] }));

  it('users API, SCIM userName, SCIM deprovisioning and re-activation', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(person, { minLength: 2, maxLength: 3 }), async (people) => {
        const { ids, reach, tokens } = await world(people);
        for (const [a, actor] of people.entries()) {
          const bearer = await t.token(ids[`u${a}`], { mfa: true });
          for (const [b, target] of people.entries()) {
            if (a === b) continue;
            const expected = mayActOn([reach(actor)], reach(target));
            const targetId = ids[`u${b}`];
            const outcomes: Record<string, number> = {};
            outcomes.membership = (
              await request(t.http).patch(`/api/v1/users/${targetId}/memberships/${ids.org}`).set('Authorization', `Bearer ${bearer}`).send({ roleId: ids[`role${b}`] })
            ).status;
            outcomes.userName = (await scimPatch(tokens[a], targetId, { op: 'replace', path: 'userName', value: `${uniq('upn')}@upn.example` })).status;
            outcomes.deprovision = (await scimPatch(tokens[a], targetId, { op: 'replace', path: 'active', value: false })).status;
            if (outcomes.deprovision === 200) outcomes.reactivate = (await scimPatch(tokens[a], targetId, { op: 'replace', path: 'active', value: true })).status;
            const want = expected ? { membership: 200, userName: 200, deprovision: 200, reactivate: 200 } : { membership: 403, userName: 403, deprovision: 403 };
            expect({ actor: a, target: b, ...outcomes }).toEqual({ actor: a, target: b, ...want });
          }
        }
      }),
      { numRuns: 12 },
    );
  });
});
