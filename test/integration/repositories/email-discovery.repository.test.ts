import { EmailDiscoveryRepository } from '../../../src/modules/sso/email-discovery/email-discovery.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Discovery by email looks a domain up across organizations, in system context as the public route
 * does: the organizations that verified it by DNS, at most two (two are a collision).
 */
describe('EmailDiscoveryRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: EmailDiscoveryRepository;
  const domain = (name: string) => `${name}.${t.label}.example`;
  const claim = (orgId: string, name: string, verified: boolean) =>
    m.owner.query(
      `INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_seen_at)
       VALUES ($1, $2, 'token', $3, CASE WHEN $3 THEN now() END, CASE WHEN $3 THEN now() END)`,
      [orgId, domain(name), verified],
    );

  beforeAll(async () => {
    m = await startMedium([EmailDiscoveryRepository]);
    repo = m.get(EmailDiscoveryRepository);
    t = await seedTenants(m.owner);
    await claim(t.orgA, 'single', true);
    await claim(t.orgA2, 'single', false);
    await claim(t.orgA, 'shared', true);
    await claim(t.orgB, 'shared', true);
    await claim(t.orgA, 'crowded', true);
    await claim(t.orgA2, 'crowded', true);
    await claim(t.orgB, 'crowded', true);
    await claim(t.orgB, 'pending', false);
  });
  afterAll(() => m.close());

  it('answers the one organization that verified the domain, not those that only claimed it', async () => {
    expect(await m.system(() => repo.verifiedClaimants(domain('single')))).toEqual([t.orgA]);
  });

  it('answers two organizations for a domain verified by two or more: a collision', async () => {
    expect((await m.system(() => repo.verifiedClaimants(domain('shared')))).sort()).toEqual([t.orgA, t.orgB].sort());
    const crowded = await m.system(() => repo.verifiedClaimants(domain('crowded')));
    expect(crowded).toHaveLength(2);
    expect([t.orgA, t.orgA2, t.orgB]).toEqual(expect.arrayContaining(crowded));
  });

  it('answers no organization for a domain nobody verified, nobody claimed, or written otherwise than as stored', async () => {
    expect(await m.system(() => repo.verifiedClaimants(domain('pending')))).toEqual([]);
    expect(await m.system(() => repo.verifiedClaimants(domain('nobody')))).toEqual([]);
    expect(await m.system(() => repo.verifiedClaimants(domain('SINGLE')))).toEqual([]);
  });

  it('sees only the caller’s own verifications under a tenant’s scope', async () => {
    expect(await m.as(orgPrincipal(t.orgB, { userId: t.adminB }), () => repo.verifiedClaimants(domain('single')))).toEqual([]);
    expect(await m.as(orgPrincipal(t.orgB, { userId: t.adminB }), () => repo.verifiedClaimants(domain('shared')))).toEqual([t.orgB]);
  });
});
