import { PASSWORD, tenantFixture, uniq } from '../../factories/tenant.factory';
import { RogueOidcIdp, startRogueOidcIdp } from '../../support/idp/rogue-oidc-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, BOOT_TIMEOUT_MS, exchangeCodeOf, insertProvider, mintedThrough, rogueEndpoints, roundTrip, verifyDomain } from '../sso-login/sso-login.kit';

/**
 * Whoever configures an IdP can make it assert any identity. The review's partner takeover ended
 * with "signed in as the partner administrator with `*` permissions" because partner sign-in
 * matches technicians by email: closing who may write partner providers (finding 2) leaves the
 * same path open to any all-organization technician with `organizations:write`, and an
 * organization's IT member with `organizations:write` could do the same to the organization's
 * owner. A provider therefore signs in only accounts whose permissions its configuring
 * administrator holds too. The rogue IdP here is the attacker's own.
 */
describe('an IdP signs in only accounts its configuring administrator could act as', () => {
  let t: TestApp;
  let idp: RogueOidcIdp;
  let ids: Record<string, string>;
  const f = tenantFixture();
  f.roles!.push(
    { key: 'helpdeskRole', scope: 'partner', partner: 'partner', name: 'Helpdesk', permissions: ['organizations:read', 'organizations:write', 'devices:read'] },
    { key: 'itRoleA', scope: 'organization', organization: 'orgA', name: 'IT', permissions: ['organizations:read', 'organizations:write'] },
    { key: 'viewerRoleA', scope: 'organization', organization: 'orgA', name: 'Viewer', permissions: ['organizations:read'] },
  );
  const helpdesk = `helpdesk-${uniq()}@example.com`;
  const itA = `it-a@${f.emails.adminA.split('@')[1]}`;
  const viewerA = `viewer-a@${f.emails.adminA.split('@')[1]}`;
  f.users!.push(
    { key: 'helpdesk', email: helpdesk, name: 'Helpdesk', password: PASSWORD, partnerMembership: { partner: 'partner', role: 'helpdeskRole', orgAccess: 'all' } },
    { key: 'itA', email: itA, name: 'IT A', memberships: [{ organization: 'orgA', role: 'itRoleA' }] },
    { key: 'viewerA', email: viewerA, name: 'Viewer A', memberships: [{ organization: 'orgA', role: 'viewerRoleA' }] },
  );

  beforeAll(async () => {
    [t, idp] = await Promise.all([startTestApp(), startRogueOidcIdp()]);
    ids = await t.seed(f);
    await verifyDomain(ids.orgA, f.emails.adminA.split('@')[1]);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), idp.stop()]);
  });

  const assert = (email: string, sub = `sub-${uniq()}`) => idp.setClaims({ sub, email, email_verified: true, name: 'Whoever' });

  describe('a partner provider configured by a helpdesk technician (all organizations, organizations:write)', () => {
    let provider: string;
    beforeAll(async () => {
      provider = await insertProvider(t, { partnerId: ids.partner, ...rogueEndpoints(idp), configuredBy: ids.helpdesk });
    });

    it('refuses to sign in the partner administrator, whose `*` the technician does not hold', async () => {
      assert(f.emails.tech);
      const before = await mintedThrough(provider);
      const cb = await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`);
      expect(cb.location).toBe('/login?error=invalid_provider_configuration');
      expect(await mintedThrough(provider)).toEqual(before);
      const [audit] = await auditOf(provider, 'sso.login.rejected');
      expect(audit.details).toEqual({ code: 'invalid_provider_configuration', reason: 'provider_configurer_not_entitled_for_account' });
    });

    it('signs in the technician who configured it (the control case)', async () => {
      assert(helpdesk);
      const cb = await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`);
      expect(exchangeCodeOf(cb.location)).not.toBeNull();
    });

    it('signs the administrator in once the administrator re-saves the provider', async () => {
      const own = await insertProvider(t, { partnerId: ids.partner, ...rogueEndpoints(idp), configuredBy: ids.tech, createdAt: '2000-01-01T00:00:00Z' });
      assert(f.emails.tech);
      const cb = await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`);
      expect(exchangeCodeOf(cb.location)).not.toBeNull();
      expect((await mintedThrough(own)).sessions).toBeGreaterThan(0);
    });
  });

  it("refuses an account's already linked subject once a less entitled technician has reconfigured the provider", async () => {
    const provider = await insertProvider(t, { partnerId: ids.partner, ...rogueEndpoints(idp), configuredBy: ids.tech, createdAt: '1999-01-01T00:00:00Z' });
    const sub = `linked-${uniq()}`;
    assert(f.emails.tech, sub);
    expect(exchangeCodeOf((await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`)).location)).not.toBeNull();
    // The helpdesk technician edits the provider (any change makes them its configurer) and has his IdP assert that subject.
    await ownerQuery(`UPDATE sso_providers SET updated_by = $2, generation = generation + 1 WHERE id = $1`, [provider, ids.helpdesk]);
    assert(`anything-${uniq()}@example.com`, sub);
    expect((await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`)).location).toBe('/login?error=invalid_provider_configuration');
    await ownerQuery(`UPDATE sso_providers SET status = 'inactive' WHERE id = $1`, [provider]);
  });

  describe("an organization provider configured by the organization's IT member (organizations:write)", () => {
    beforeAll(async () => {
      await insertProvider(t, { orgId: ids.orgA, ...rogueEndpoints(idp), configuredBy: ids.itA });
    });

    it("refuses to sign in the organization's owner", async () => {
      assert(f.emails.adminA);
      expect((await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`)).location).toBe('/login?error=invalid_provider_configuration');
    });

    it('refuses a member holding a permission the IT member lacks', async () => {
      assert(f.emails.readerA);
      expect((await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`)).location).toBe('/login?error=invalid_provider_configuration');
    });

    it('signs in a member whose permissions the IT member holds', async () => {
      assert(viewerA);
      expect(exchangeCodeOf((await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`)).location)).not.toBeNull();
    });
  });
});
