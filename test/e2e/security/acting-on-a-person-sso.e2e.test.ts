import { PASSWORD, tenantFixture, uniq } from '../../factories/tenant.factory';
import { RogueOidcIdp, startRogueOidcIdp } from '../../support/idp/rogue-oidc-idp';
import { startTestApp, TestApp } from '../../support/test-app';
import { auditOf, BOOT_TIMEOUT_MS, exchangeCodeOf, insertProvider, rogueEndpoints, roundTrip, verifyDomain } from '../sso-login/sso-login.kit';

/**
 * Finding 3 of the review: a member with `*` restricted to one site configured an OIDC provider
 * pointing at their own IdP and signed in as the all-sites owner, whose devices on other sites
 * they could then read; a partner administrator restricted to one site did the same to the
 * partner administrator. The configurer rule compared permissions only. A provider now signs in
 * only accounts its configurer has authority over: every permission, organization and site.
 */
describe('an IdP configured by a site-restricted administrator signs in no one who reaches further', () => {
  let t: TestApp;
  let idp: RogueOidcIdp;
  let ids: Record<string, string>;
  const f = tenantFixture();
  const domain = f.emails.adminA.split('@')[1];
  const sameSite = `same-site@${domain}`;
  const restrictedTech = `restricted-tech-${uniq()}@example.com`;
  f.users!.push(
    { key: 'sameSite', email: sameSite, name: 'Same site', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'adminRoleA', sites: ['siteA1'] }] },
    { key: 'restrictedTech', email: restrictedTech, name: 'Restricted tech', password: PASSWORD, partnerMembership: { partner: 'partner', role: 'techRole', orgAccess: 'all', sites: ['siteA1'] } },
  );

  beforeAll(async () => {
    [t, idp] = await Promise.all([startTestApp(), startRogueOidcIdp()]);
    ids = await t.seed(f);
    await verifyDomain(ids.orgA, domain);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), idp.stop()]);
  });

  const assert = (email: string) => idp.setClaims({ sub: `sub-${uniq()}`, email, email_verified: true, name: 'Whoever' });

  describe('an organization provider configured by a member with `*` on site A1 only', () => {
    let provider: string;
    beforeAll(async () => {
      provider = await insertProvider(t, { orgId: ids.orgA, ...rogueEndpoints(idp), configuredBy: ids.siteA1User });
    });

    it('refuses to sign in the owner, who reaches every site', async () => {
      assert(f.emails.adminA);
      expect((await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`)).location).toBe('/login?error=invalid_provider_configuration');
      const [audit] = await auditOf(provider, 'sso.login.rejected');
      expect(audit.details).toEqual({ code: 'invalid_provider_configuration', reason: 'provider_configurer_not_entitled_for_account' });
    });

    it('signs in a member who holds `*` on that same site (the control case)', async () => {
      assert(sameSite);
      expect(exchangeCodeOf((await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`)).location)).not.toBeNull();
    });
  });

  describe('a partner provider configured by a partner administrator restricted to site A1', () => {
    beforeAll(async () => {
      await insertProvider(t, { partnerId: ids.partner, ...rogueEndpoints(idp), configuredBy: ids.restrictedTech });
    });

    it('refuses to sign in the partner administrator, who reaches every site', async () => {
      assert(f.emails.tech);
      expect((await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`)).location).toBe('/login?error=invalid_provider_configuration');
    });

    it('signs in the restricted administrator themself (the control case)', async () => {
      assert(restrictedTech);
      expect(exchangeCodeOf((await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}`)).location)).not.toBeNull();
    });
  });
});
