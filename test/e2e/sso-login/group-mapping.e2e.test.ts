import request from 'supertest';
import { PASSWORD, tenantFixture } from '../../factories/tenant.factory';
import { OidcOpHandle } from '../../support/idp/oidc-op';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, exchange, exchangeCodeOf, insertProvider, mintedThrough, opEndpoints, registerWithOp, roundTrip, verifyDomain, BOOT_TIMEOUT_MS, startOp } from './sso-login.kit';

/**
 * Issue 16, group-to-role mapping at SSO sign-in: the provider's mappings are read against the
 * `groups` claim of every sign-in through the real test OP, re-checked against the administrator
 * who saved them, and a group removed at the IdP takes its role away (back to the default role).
 */
describe('group-to-role mapping at OIDC sign-in', () => {
  let t: TestApp;
  let op: OidcOpHandle;
  let f: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;
  let domain: string;
  let provider: string;

  const GROUPS_MAPPING = { email: 'email', name: 'name', groups: 'groups' };

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOp()]);
    await registerWithOp(op);
    f = tenantFixture();
    f.roles!.push({ key: 'operatorRoleA', scope: 'organization', organization: 'orgA', name: 'Operator', permissions: ['organizations:read', 'devices:read', 'devices:write'] });
    f.emails.mapper = `mapper@${f.emails.adminA.split('@')[1]}`;
    f.users!.push({ key: 'mapper', email: f.emails.mapper, name: 'Mapping Admin', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'adminRoleA' }] });
    ids = await t.seed(f);
    domain = f.emails.adminA.split('@')[1];
    await verifyDomain(ids.orgA, domain);
    provider = await insertProvider(t, {
      orgId: ids.orgA,
      name: 'Directory IdP',
      ...opEndpoints(op),
      scopes: 'openid profile email groups',
      attributeMapping: GROUPS_MAPPING,
      defaultRoleId: ids.readerRoleA,
      defaultRoleSetBy: ids.adminA,
      configuredBy: ids.adminA,
    });
    // Saved through the API by an administrator other than the provider's configurer.
    const mapper = await t.token(ids.mapper, { mfa: true });
    await request(t.http)
      .put(`/api/v1/sso/providers/${provider}/group-mappings`)
      .set('Authorization', `Bearer ${mapper}`)
      .send({
        mappings: [
          { group: 'rmm-admins', roleId: ids.adminRoleA },
          { group: 'rmm-operators', roleId: ids.operatorRoleA, siteIds: [ids.siteA1] },
        ],
      })
      .expect(200);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  /** Signs `sub` in through the provider with these groups; returns the user id behind the session. */
  async function signIn(sub: string, email: string, groups: string[] | undefined): Promise<string> {
    await op.setAccount(sub, { email, email_verified: true, name: sub, ...(groups ? { groups } : {}) });
    await op.loginAs(sub);
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(cb.location).toMatch(/#ssoCode=/);
    const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
    const me = await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${pair.body.accessToken}`).expect(200);
    return me.body.user.id as string;
  }

  async function membership(userId: string): Promise<{ role_id: string; site_restricted: boolean; sites: string[] }> {
    const [m] = await ownerQuery<{ role_id: string; site_restricted: boolean; sites: string[] }>(
      `SELECT m.role_id, m.site_restricted,
              coalesce((SELECT array_agg(s.site_id ORDER BY s.site_id) FROM organization_membership_sites s WHERE s.org_id = m.org_id AND s.user_id = m.user_id), '{}') AS sites
         FROM organization_memberships m WHERE m.org_id = $1 AND m.user_id = $2`,
      [ids.orgA, userId],
    );
    return m;
  }

  it('gives a person whose groups claim names a mapped group that role and its site restriction, and audits it', async () => {
    const userId = await signIn('operator-1', `operator-1@${domain}`, ['Everyone', 'rmm-operators']);
    expect(await membership(userId)).toEqual({ role_id: ids.operatorRoleA, site_restricted: true, sites: [ids.siteA1] });
    const [audit] = await ownerQuery<{ details: Record<string, unknown> }>(`SELECT details FROM audit_logs WHERE action = 'sso.user.role_mapped' AND resource_id = $1`, [userId]);
    expect(audit.details).toEqual({ providerId: provider, outcome: 'mapped', roleId: ids.operatorRoleA, group: 'rmm-operators', skippedGroups: [] });
  });

  it('changes the role when the group changes at the IdP, at the next sign-in, and matches group names whatever their case', async () => {
    const email = `mover@${domain}`;
    const userId = await signIn('mover', email, ['rmm-operators']);
    expect((await membership(userId)).role_id).toBe(ids.operatorRoleA);

    expect(await signIn('mover', email, ['RMM-Admins'])).toBe(userId);
    expect(await membership(userId)).toEqual({ role_id: ids.adminRoleA, site_restricted: false, sites: [] });

    // In both groups: the first mapping in list order wins.
    await signIn('mover', email, ['rmm-operators', 'rmm-admins']);
    expect((await membership(userId)).role_id).toBe(ids.adminRoleA);
  });

  it('falls back to the default role, every site, when the mapped group is removed (the claim empty or absent)', async () => {
    const email = `leaver@${domain}`;
    const userId = await signIn('leaver', email, ['rmm-operators']);
    expect((await membership(userId)).role_id).toBe(ids.operatorRoleA);

    await signIn('leaver', email, []);
    expect(await membership(userId)).toEqual({ role_id: ids.readerRoleA, site_restricted: false, sites: [] });

    await signIn('leaver', email, ['rmm-admins']);
    await signIn('leaver', email, undefined);
    expect((await membership(userId)).role_id).toBe(ids.readerRoleA);
  });

  it('does not apply a mapping whose role the administrator who saved it can no longer grant', async () => {
    const email = `climber@${domain}`;
    const userId = await signIn('climber', email, ['rmm-operators']);
    await ownerQuery(`UPDATE organization_memberships SET role_id = $3 WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.mapper, ids.readerRoleA]);
    try {
      // Only in the admins group: that mapping is skipped, so nothing applies and the default role is given.
      await signIn('climber', email, ['rmm-admins']);
      expect((await membership(userId)).role_id).toBe(ids.readerRoleA);
      const [audit] = await ownerQuery<{ details: Record<string, unknown> }>(
        `SELECT details FROM audit_logs WHERE action = 'sso.user.role_mapped' AND resource_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
        [userId],
      );
      expect(audit.details).toMatchObject({ outcome: 'default', roleId: ids.readerRoleA, skippedGroups: ['rmm-admins'] });
    } finally {
      await ownerQuery(`UPDATE organization_memberships SET role_id = $3 WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.mapper, ids.adminRoleA]);
    }
    // Entitled again: the mapping applies again.
    await signIn('climber', email, ['rmm-admins']);
    expect((await membership(userId)).role_id).toBe(ids.adminRoleA);
  });

  it('does not count a suspended administrator as entitled to the roles of their mappings', async () => {
    const email = `suspended-mapper@${domain}`;
    const userId = await signIn('suspended-mapper', email, []);
    await ownerQuery(`UPDATE organization_memberships SET suspended_at = now() WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.mapper]);
    try {
      await signIn('suspended-mapper', email, ['rmm-admins']);
      expect((await membership(userId)).role_id).toBe(ids.readerRoleA);
    } finally {
      await ownerQuery(`UPDATE organization_memberships SET suspended_at = NULL WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.mapper]);
    }
  });

  it('refuses a suspended membership up front with user_disabled, mints nothing, leaves the role alone and audits the reason', async () => {
    const email = `deprovisioned@${domain}`;
    const userId = await signIn('deprovisioned', email, ['rmm-operators']);
    await ownerQuery(`UPDATE organization_memberships SET suspended_at = now() WHERE org_id = $1 AND user_id = $2`, [ids.orgA, userId]);
    const before = await mintedThrough(provider);

    await op.setAccount('deprovisioned', { email, email_verified: true, groups: ['rmm-admins'] });
    await op.loginAs('deprovisioned');
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(cb.location).toBe('/login?error=user_disabled');
    expect(await mintedThrough(provider)).toEqual(before);
    expect((await membership(userId)).role_id).toBe(ids.operatorRoleA);
    const [audit] = await auditOf(provider, 'sso.login.rejected');
    expect(audit.details).toEqual({ code: 'user_disabled', reason: 'membership_suspended' });
  });

  it('refuses a sign-in whose mapped role the provider configurer does not hold, and rolls everything back', async () => {
    // Another organization whose provider was configured by a reader: the admins mapping, saved by an
    // entitled administrator, would lift the account above what the provider's configurer holds.
    const g = tenantFixture();
    const gIds = await t.seed(g);
    const gDomain = g.emails.adminA.split('@')[1];
    await verifyDomain(gIds.orgA, gDomain);
    const limited = await insertProvider(t, {
      orgId: gIds.orgA,
      ...opEndpoints(op),
      scopes: 'openid profile email groups',
      attributeMapping: GROUPS_MAPPING,
      defaultRoleId: gIds.readerRoleA,
      defaultRoleSetBy: gIds.adminA,
      configuredBy: gIds.readerA,
    });
    await ownerQuery(`INSERT INTO group_role_mappings (org_id, provider_id, position, idp_group, role_id, set_by) VALUES ($1, $2, 0, 'rmm-admins', $3, $4)`, [
      gIds.orgA,
      limited,
      gIds.adminRoleA,
      gIds.adminA,
    ]);
    const email = `would-be-admin@${gDomain}`;
    await op.setAccount('would-be-admin', { email, email_verified: true, groups: ['rmm-admins'] });
    await op.loginAs('would-be-admin');
    const cb = await roundTrip(t, `/api/v1/sso/login/${gIds.orgA}`);
    expect(cb.location).toBe('/login?error=invalid_provider_configuration');
    const [audit] = await auditOf(limited, 'sso.login.rejected');
    expect(audit.details).toEqual({ code: 'invalid_provider_configuration', reason: 'provider_configurer_not_entitled_for_account' });
    expect(await ownerQuery(`SELECT id FROM users WHERE email = $1`, [email])).toEqual([]);

    // Without the group, the default role is within the configurer's reach.
    await op.setAccount('would-be-admin', { email, email_verified: true, groups: [] });
    await op.loginAs('would-be-admin');
    expect((await roundTrip(t, `/api/v1/sso/login/${gIds.orgA}`)).location).toMatch(/#ssoCode=/);
  });

  it('applies partner role mappings to a technician signing in through the partner provider, and refuses one no mapping covers', async () => {
    const partnerProvider = await insertProvider(t, {
      partnerId: ids.partner,
      ...opEndpoints(op),
      scopes: 'openid profile email groups',
      attributeMapping: GROUPS_MAPPING,
      configuredBy: ids.tech,
    });
    const [limitedRole] = await ownerQuery<{ id: string }>(
      `INSERT INTO roles (partner_id, scope, name, permissions) VALUES ($1, 'partner', 'Field technician', ARRAY['devices:read', 'devices:execute']) RETURNING id`,
      [ids.partner],
    );
    const admin = await t.token(ids.tech, { mfa: true });
    await request(t.http)
      .put(`/api/v1/sso/providers/${partnerProvider}/group-mappings`)
      .set('Authorization', `Bearer ${admin}`)
      .send({ mappings: [{ group: 'field', roleId: limitedRole.id }] })
      .expect(200);
    const partnerRole = async () => (await ownerQuery<{ role_id: string }>(`SELECT role_id FROM partner_memberships WHERE partner_id = $1 AND user_id = $2`, [ids.partner, ids.techA]))[0].role_id;

    await op.setAccount('tech-a-idp', { email: f.emails.techA, email_verified: true, groups: ['field'] });
    await op.loginAs('tech-a-idp');
    expect((await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`)).location).toMatch(/#ssoCode=/);
    expect(await partnerRole()).toBe(limitedRole.id);

    const before = await mintedThrough(partnerProvider);
    await op.setAccount('tech-a-idp', { email: f.emails.techA, email_verified: true, groups: [] });
    await op.loginAs('tech-a-idp');
    expect((await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`)).location).toBe('/login?error=no_org_access');
    expect(await mintedThrough(partnerProvider)).toEqual(before);
    const [audit] = await auditOf(partnerProvider, 'sso.login.rejected');
    expect(audit.details).toEqual({ code: 'no_org_access', reason: 'no_group_mapping_applies' });
  });
});
