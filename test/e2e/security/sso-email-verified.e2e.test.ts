import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { RogueOidcIdp, startRogueOidcIdp } from '../../support/idp/rogue-oidc-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, BOOT_TIMEOUT_MS, exchange, exchangeCodeOf, insertProvider, mintedThrough, rogueEndpoints, roundTrip, verifyDomain } from '../sso-login/sso-login.kit';

/**
 * Issue 13 item 12: an organization's IdP (run by that organization's administrator, here the
 * repository's rogue IdP) tries to take over an existing password account of one of its members
 * by asserting the member's email as verified, without the organization having proved it owns
 * the email's domain. `email_verified` must come from the claim source that supplied the email,
 * a `false` anywhere wins, a non-standard email claim is never "verified", and an account with a
 * password is only linked by email on a domain the organization verified by DNS.
 */
describe('trusting email_verified at SSO sign-in', () => {
  let t: TestApp;
  let idp: RogueOidcIdp;
  let f: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;
  let domain: string;
  let ssoOnlyEmail: string;

  beforeAll(async () => {
    [t, idp] = await Promise.all([startTestApp(), startRogueOidcIdp()]);
    f = tenantFixture();
    domain = f.emails.adminA.split('@')[1];
    ssoOnlyEmail = `sso-only@${domain}`;
    // An account created by an earlier SSO sign-in: no password to take over.
    f.users!.push({ key: 'ssoOnly', email: ssoOnlyEmail, name: 'SSO Only', memberships: [{ organization: 'orgA', role: 'readerRoleA' }] });
    ids = await t.seed(f);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), idp.stop()]);
  });

  /** A fresh provider of organization A on the rogue IdP, so each attack starts with no identity links. */
  async function freshProvider(mapping?: Record<string, string>): Promise<string> {
    await ownerQuery(`UPDATE sso_providers SET status = 'inactive' WHERE org_id = $1`, [ids.orgA]);
    return insertProvider(t, { orgId: ids.orgA, ...rogueEndpoints(idp), autoProvision: false, ...(mapping ? { attributeMapping: mapping } : {}) });
  }

  async function linksOf(userId: string, provider: string): Promise<number> {
    const [row] = await ownerQuery<{ n: string }>(`SELECT count(*) AS n FROM user_sso_identities WHERE user_id = $1 AND provider_id = $2`, [userId, provider]);
    return Number(row.n);
  }

  async function expectRefused(provider: string, code: string, reason: string): Promise<void> {
    const before = await mintedThrough(provider);
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(cb.location).toBe(`/login?error=${code}`);
    expect(await mintedThrough(provider)).toEqual(before);
    expect(await linksOf(ids.readerA, provider)).toBe(0);
    const [audit] = await auditOf(provider, 'sso.login.rejected');
    expect(audit.details).toEqual({ code, reason });
  }

  it('an ID token saying email_verified false is not overridden by UserInfo saying true', async () => {
    const provider = await freshProvider();
    idp.setClaims({ sub: 'takeover-1', email: f.emails.readerA }, { idToken: { email_verified: false }, userInfo: { email_verified: true } });
    await expectRefused(provider, 'sso_email_unverified', 'idp_reports_email_unverified');
  });

  it('UserInfo saying email_verified false is not overridden by the ID token saying true', async () => {
    const provider = await freshProvider();
    idp.setClaims({ sub: 'takeover-2', email: f.emails.readerA }, { idToken: { email_verified: true }, userInfo: { email_verified: false } });
    await expectRefused(provider, 'sso_email_unverified', 'idp_reports_email_unverified');
  });

  it("an email supplied by UserInfo is not verified by the ID token's email_verified about another address", async () => {
    const provider = await freshProvider();
    idp.setClaims(
      { sub: 'takeover-3', email_verified: undefined },
      { idToken: { email: `someone-else@${domain}`, email_verified: true }, userInfo: { email: f.emails.readerA } },
    );
    await expectRefused(provider, 'sso_domain_unverified', 'email_verification_absent_and_domain_not_verified');
  });

  it('a non-standard email claim (attributeMapping.email = upn) is not verified by email_verified', async () => {
    const provider = await freshProvider({ email: 'upn', name: 'name' });
    idp.setClaims({ sub: 'takeover-4', upn: f.emails.readerA, email: `mailbox@${domain}`, email_verified: true });
    await expectRefused(provider, 'sso_domain_unverified', 'email_verification_absent_and_domain_not_verified');
  });

  it('an existing account with a password is not linked by an email the IdP calls verified, on a domain the organization has not proved', async () => {
    const provider = await freshProvider();
    idp.setClaims({ sub: 'takeover-5', email: f.emails.readerA, email_verified: true });
    await expectRefused(provider, 'sso_domain_unverified', 'password_account_needs_verified_domain');
  });

  it('links the same password account once the organization has verified the domain by DNS', async () => {
    const provider = await freshProvider();
    await verifyDomain(ids.orgA, domain);
    try {
      idp.setClaims({ sub: 'legit-5', email: f.emails.readerA, email_verified: true });
      const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
      expect(cb.location).toMatch(/^\/#ssoCode=/);
      const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
      const who = await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${pair.body.accessToken}`).expect(200);
      expect(who.body.user.id).toBe(ids.readerA);
      expect(await linksOf(ids.readerA, provider)).toBe(1);
    } finally {
      await ownerQuery(`DELETE FROM sso_verified_domains WHERE org_id = $1`, [ids.orgA]);
    }
  });

  it('still matches an account without a password by an email the IdP verified (spec 1.2.2)', async () => {
    const provider = await freshProvider();
    idp.setClaims({ sub: 'sso-only', email: ssoOnlyEmail, email_verified: true });
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(cb.location).toMatch(/^\/#ssoCode=/);
    expect(await linksOf(ids.ssoOnly, provider)).toBe(1);
  });
});
