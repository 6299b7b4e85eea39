import { tenantFixture } from '../../factories/tenant.factory';
import { createTestSamlIdp, TestSamlIdp } from '../../support/idp/saml-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { insertSamlProvider, lastRejection, samlRoundTrip } from '../sso-saml/saml.kit';
import { verifyDomain } from './sso-login.kit';

const GROUPS = 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups';

/**
 * Issue 16, group-to-role mapping at SAML sign-in: the groups attribute of each signed assertion
 * from the test IdP (Microsoft's groups claim, read without naming it in the attribute mapping)
 * sets the role; a group removed at the IdP falls back to the default role.
 */
describe('group-to-role mapping at SAML sign-in', () => {
  let t: TestApp;
  let idp: TestSamlIdp;
  let ids: Record<string, string>;
  let f: ReturnType<typeof tenantFixture>;
  let provider: string;

  beforeAll(async () => {
    t = await startTestApp();
    idp = createTestSamlIdp();
    f = tenantFixture();
    f.roles!.push({ key: 'operatorRoleA', scope: 'organization', organization: 'orgA', name: 'Operator', permissions: ['organizations:read', 'devices:read', 'devices:write'] });
    ids = await t.seed(f);
    await verifyDomain(ids.orgA, f.emails.adminA.split('@')[1]);
    provider = await insertSamlProvider({ orgId: ids.orgA, idp, defaultRoleId: ids.readerRoleA, defaultRoleSetBy: ids.adminA, configuredBy: ids.adminA });
    await ownerQuery(
      `INSERT INTO group_role_mappings (org_id, provider_id, position, idp_group, role_id, site_ids, set_by) VALUES ($1, $2, 0, 'RMM Operators', $3, ARRAY[$4::uuid], $5)`,
      [ids.orgA, provider, ids.operatorRoleA, ids.siteA2, ids.adminA],
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const signIn = (groups: string[]) =>
    samlRoundTrip(t, `/api/v1/sso/saml/login/${ids.orgA}`, (req) => idp.buildResponseFor(req, { nameId: f.emails.readerA, attributes: groups.length ? { [GROUPS]: groups } : {} }));
  const membership = async () =>
    (
      await ownerQuery<{ role_id: string; sites: string[] }>(
        `SELECT m.role_id, coalesce((SELECT array_agg(s.site_id) FROM organization_membership_sites s WHERE s.org_id = m.org_id AND s.user_id = m.user_id), '{}') AS sites
           FROM organization_memberships m WHERE m.org_id = $1 AND m.user_id = $2`,
        [ids.orgA, ids.readerA],
      )
    )[0];

  it('gives the mapped role and its sites from the groups attribute, and the default role again once the group is gone', async () => {
    expect((await signIn(['Everyone', 'RMM Operators'])).location).toMatch(/#ssoCode=/);
    expect(await membership()).toEqual({ role_id: ids.operatorRoleA, sites: [ids.siteA2] });

    expect((await signIn(['Everyone'])).location).toMatch(/#ssoCode=/);
    expect(await membership()).toEqual({ role_id: ids.readerRoleA, sites: [] });
  });

  it('refuses a suspended membership up front, whatever groups the assertion carries', async () => {
    await ownerQuery(`UPDATE organization_memberships SET suspended_at = now() WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.readerA]);
    try {
      expect((await signIn(['RMM Operators'])).location).toBe('/login?error=user_disabled');
      expect(await lastRejection(provider)).toEqual({ code: 'user_disabled', reason: 'membership_suspended' });
      expect((await membership()).role_id).toBe(ids.readerRoleA);
    } finally {
      await ownerQuery(`UPDATE organization_memberships SET suspended_at = NULL WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.readerA]);
    }
  });
});
