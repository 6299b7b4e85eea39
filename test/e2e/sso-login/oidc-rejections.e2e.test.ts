import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { browserlessAuthorize, OidcOpHandle } from '../../support/idp/oidc-op';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, bumpGeneration, callback, exchangeCodeOf, insertProvider, opEndpoints, ProviderInput, registerWithOp, roundTrip, mintedThrough, sessionCount, startLogin, verifyDomain, BOOT_TIMEOUT_MS, startOp } from './sso-login.kit';

/**
 * Every refusal of the callback: the contract code in the redirect, no session minted, and an
 * audit row holding the precise reason.
 */
describe('OIDC callback refusals', () => {
  let t: TestApp;
  let op: OidcOpHandle;

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOp()]);
    await registerWithOp(op);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  /** A fresh tenant and a provider for its organization A, configured by `overrides`. */
  async function tenantWithProvider(overrides: (ids: Record<string, string>) => ProviderInput = () => ({})) {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const domain = f.emails.adminA.split('@')[1];
    // The organization owns its users' domain: matching a password account or provisioning needs that proof.
    await verifyDomain(ids.orgA, domain);
    const provider = await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), defaultRoleId: ids.readerRoleA, defaultRoleSetBy: ids.adminA, ...overrides(ids) });
    return { f, ids, domain, provider };
  }

  async function expectRefused(provider: string, loginPath: string, code: string, reason: string) {
    const before = await mintedThrough(provider);
    const cb = await roundTrip(t, loginPath);
    expect(cb.status).toBe(302);
    expect(cb.location).toBe(`/login?error=${code}`);
    expect(await mintedThrough(provider)).toEqual(before);
    const [audit] = await auditOf(provider, 'sso.login.rejected');
    expect(audit.details).toEqual({ code, reason });
    return cb;
  }

  it('domain_not_allowed: the email domain is outside allowedDomains', async () => {
    const { f, ids, provider } = await tenantWithProvider(() => ({ allowedDomains: 'elsewhere.example,other.example' }));
    await op.setAccount('dna', { email: f.emails.adminA, email_verified: true });
    await op.loginAs('dna');
    await expectRefused(provider, `/api/v1/sso/login/${ids.orgA}`, 'domain_not_allowed', 'email_domain_not_in_allowed_domains');
  });

  it('user_not_found: no account and autoProvision off, and nothing is created', async () => {
    const { ids, domain, provider } = await tenantWithProvider(() => ({ autoProvision: false }));
    const email = `nobody@${domain}`;
    await op.setAccount('unf', { email, email_verified: true });
    await op.loginAs('unf');
    await expectRefused(provider, `/api/v1/sso/login/${ids.orgA}`, 'user_not_found', 'no_account_and_auto_provision_off');
    expect(await ownerQuery(`SELECT id FROM users WHERE email = $1`, [email])).toEqual([]);
  });

  it('user_disabled: the matched account is disabled', async () => {
    const { f, ids, provider } = await tenantWithProvider();
    await ownerQuery(`UPDATE users SET status = 'disabled' WHERE id = $1`, [ids.readerA]);
    await op.setAccount('ud', { email: f.emails.readerA, email_verified: true });
    await op.loginAs('ud');
    await expectRefused(provider, `/api/v1/sso/login/${ids.orgA}`, 'user_disabled', 'account_disabled');
  });

  // A user of another organization is answered as an unknown address (issue 13, 10a: test/e2e/security/sso-account-enumeration);
  // no_org_access is for someone the organization sees without a membership: a technician of its partner.
  it("no_org_access: a technician of the organization's partner has no membership of the provider's organization", async () => {
    const { f, ids, provider } = await tenantWithProvider();
    await op.setAccount('noa', { email: f.emails.tech, email_verified: true });
    await op.loginAs('noa');
    await expectRefused(provider, `/api/v1/sso/login/${ids.orgA}`, 'no_org_access', 'no_organization_membership');
    expect(await ownerQuery(`SELECT 1 FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.tech])).toEqual([]);
  });

  it('invite_required: a partner provider never provisions an unknown identity', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const provider = await insertProvider(t, { partnerId: ids.partner, ...opEndpoints(op) });
    const email = `stranger@${f.emails.tech.split('@')[1]}`;
    await op.setAccount('stranger', { email, email_verified: true });
    await op.loginAs('stranger');
    await expectRefused(provider, `/api/v1/sso/login/partner/${ids.partner}`, 'invite_required', 'no_account');
    expect(await ownerQuery(`SELECT id FROM users WHERE email = $1`, [email])).toEqual([]);
  });

  it('invite_required: an organization user is not a technician of the partner', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const provider = await insertProvider(t, { partnerId: ids.partner, ...opEndpoints(op) });
    await op.setAccount('org-user', { email: f.emails.readerA, email_verified: true });
    await op.loginAs('org-user');
    await expectRefused(provider, `/api/v1/sso/login/partner/${ids.partner}`, 'invite_required', 'not_a_technician_of_this_partner');
  });

  describe('default_role_required: provisioning needs a default role its configurer may still grant (spec 1.2.4)', () => {
    const provisionAttempt = async (provider: string, ids: Record<string, string>, domain: string, reason: string) => {
      const email = `jit-${reason.slice(0, 12)}-${Date.now()}@${domain}`;
      await op.setAccount(email, { email, email_verified: true });
      await op.loginAs(email);
      await expectRefused(provider, `/api/v1/sso/login/${ids.orgA}`, 'default_role_required', reason);
      expect(await ownerQuery(`SELECT id FROM users WHERE email = $1`, [email])).toEqual([]);
    };

    it('refuses when no default role is set', async () => {
      const { ids, domain, provider } = await tenantWithProvider(() => ({ defaultRoleId: null, defaultRoleSetBy: null }));
      await provisionAttempt(provider, ids, domain, 'no_default_role');
    });

    it('refuses when the provider predates the delegation check (nobody recorded as configurer)', async () => {
      const { ids, domain, provider } = await tenantWithProvider(() => ({ defaultRoleSetBy: null }));
      await provisionAttempt(provider, ids, domain, 'default_role_configurer_unknown');
    });

    it('refuses once the configuring administrator is deactivated, while existing users still sign in', async () => {
      const { f, ids, domain, provider } = await tenantWithProvider((i) => ({ defaultRoleId: i.adminRoleA, defaultRoleSetBy: i.siteA1User }));
      await ownerQuery(`UPDATE users SET status = 'disabled' WHERE id = $1`, [ids.siteA1User]);
      await provisionAttempt(provider, ids, domain, 'default_role_configurer_inactive');

      await op.setAccount('existing-reader', { email: f.emails.readerA, email_verified: true });
      await op.loginAs('existing-reader');
      expect((await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`)).location).toMatch(/^\/#ssoCode=/);
    });

    it('refuses once the configuring administrator was demoted below the role it grants', async () => {
      const { ids, domain, provider } = await tenantWithProvider((i) => ({ defaultRoleId: i.adminRoleA, defaultRoleSetBy: i.siteA1User }));
      await ownerQuery(`UPDATE organization_memberships SET role_id = $1 WHERE org_id = $2 AND user_id = $3`, [ids.readerRoleA, ids.orgA, ids.siteA1User]);
      await provisionAttempt(provider, ids, domain, 'default_role_configurer_no_longer_entitled');
    });

    it('provisions when the configurer is a technician of the partner who holds the role permissions', async () => {
      const { ids, domain, provider } = await tenantWithProvider((i) => ({ defaultRoleId: i.adminRoleA, defaultRoleSetBy: i.techA }));
      const email = `jit-by-tech@${domain}`;
      await op.setAccount(email, { email, email_verified: true });
      await op.loginAs(email);
      expect((await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`)).location).toMatch(/^\/#ssoCode=/);
      const [{ role_id }] = await ownerQuery<{ role_id: string }>(`SELECT m.role_id FROM organization_memberships m JOIN users u ON u.id = m.user_id WHERE u.email = $1`, [email]);
      expect(role_id).toBe(ids.adminRoleA);
      expect((await auditOf(provider, 'sso.login.rejected')).length).toBe(0);
    });
  });

  it('identity_in_use: the account is already linked to another identity of this provider', async () => {
    const { f, ids, provider } = await tenantWithProvider();
    await op.setAccount('first-identity', { email: f.emails.readerA, email_verified: true });
    await op.loginAs('first-identity');
    expect((await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`)).location).toMatch(/^\/#ssoCode=/);

    await op.setAccount('second-identity', { email: f.emails.readerA, email_verified: true });
    await op.loginAs('second-identity');
    await expectRefused(provider, `/api/v1/sso/login/${ids.orgA}`, 'identity_in_use', 'account_linked_to_another_subject');
    const links = await ownerQuery(`SELECT external_id FROM user_sso_identities WHERE provider_id = $1`, [provider]);
    expect(links).toEqual([{ external_id: 'first-identity' }]);
  });

  it('sso_provider_inactive: the provider was deactivated while the sign-in was at the IdP', async () => {
    const { f, ids, provider } = await tenantWithProvider();
    await op.setAccount('mid-deactivate', { email: f.emails.readerA, email_verified: true });
    await op.loginAs('mid-deactivate');
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}`);
    const idpRedirect = await browserlessAuthorize(started.location);
    await ownerQuery(`UPDATE sso_providers SET status = 'inactive', generation = generation + 1 WHERE id = $1`, [provider]);
    const before = await sessionCount(ids.readerA);
    const cb = await callback(t, idpRedirect, started.cookie);
    expect(cb.location).toBe('/login?error=sso_provider_inactive');
    expect(await sessionCount(ids.readerA)).toBe(before);
    expect((await auditOf(provider, 'sso.login.rejected'))[0].details).toEqual({ code: 'sso_provider_inactive', reason: 'provider_inactive' });
  });

  it('sso_config_changed: the provider was reconfigured (PATCH through the API) while the sign-in was at the IdP', async () => {
    const { f, ids, provider } = await tenantWithProvider();
    await op.setAccount('mid-patch', { email: f.emails.readerA, email_verified: true });
    await op.loginAs('mid-patch');
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}`);
    const idpRedirect = await browserlessAuthorize(started.location);
    const admin = await t.token(ids.adminA, { mfa: true });
    await request(t.http).patch(`/api/v1/sso/providers/${provider}`).set('Authorization', `Bearer ${admin}`).send({ name: 'Renamed IdP' }).expect(200);
    const cb = await callback(t, idpRedirect, started.cookie);
    expect(cb.location).toBe('/login?error=sso_config_changed');
    expect((await auditOf(provider, 'sso.login.rejected'))[0].details).toEqual({ code: 'sso_config_changed', reason: 'provider_reconfigured_since_login_start' });
  });

  it('invalid_provider_configuration: the provider lost its client secret without a generation change', async () => {
    const { f, ids, provider } = await tenantWithProvider();
    await op.setAccount('lost-secret', { email: f.emails.readerA, email_verified: true });
    await op.loginAs('lost-secret');
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}`);
    const idpRedirect = await browserlessAuthorize(started.location);
    await ownerQuery(`UPDATE sso_providers SET client_secret = NULL WHERE id = $1`, [provider]);
    const cb = await callback(t, idpRedirect, started.cookie);
    expect(cb.location).toBe('/login?error=invalid_provider_configuration');
    expect((await auditOf(provider, 'sso.login.rejected'))[0].details).toEqual({ code: 'invalid_provider_configuration', reason: 'provider_incomplete' });
  });

  it('sso_error: the IdP sent the browser back with an error instead of a code', async () => {
    const { ids, provider } = await tenantWithProvider();
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}`);
    const state = new URL(started.location).searchParams.get('state');
    // The OP names itself in error answers too (RFC 9207), so the forged answer carries its iss.
    const cb = await callback(
      t,
      `http://localhost:3000/api/v1/sso/callback?error=access_denied&error_description=User+cancelled+%3Cscript%3E&state=${state}&iss=${encodeURIComponent(op.issuer)}`,
      started.cookie,
    );
    expect(cb.location).toBe('/login?error=sso_error');
    expect((await auditOf(provider, 'sso.login.rejected'))[0].details).toEqual({ code: 'sso_error', reason: 'idp_returned_error_access_denied' });
  });

  it('never lets an exchange code out on a refusal', async () => {
    const { f, ids } = await tenantWithProvider(() => ({ allowedDomains: 'elsewhere.example' }));
    await op.setAccount('no-code', { email: f.emails.adminA, email_verified: true });
    await op.loginAs('no-code');
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(exchangeCodeOf(cb.location)).toBeNull();
    expect(await ownerQuery(`SELECT id FROM sso_exchange_codes WHERE org_id = $1`, [ids.orgA])).toEqual([]);
  });

  it('audits a callback with a forged state cookie under the tenant the state names, and leaves the session row', async () => {
    const { ids, provider } = await tenantWithProvider();
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}`);
    const state = new URL(started.location).searchParams.get('state');
    const cb = await callback(t, `http://localhost:3000/api/v1/sso/callback?code=x&state=${state}`, `svc_sso_state=${state}.${'A'.repeat(43)}`);
    expect(cb.location).toBe('/login?error=invalid_callback');
    const [audit] = await auditOf(provider, 'sso.login.rejected');
    expect(audit).toMatchObject({ org_id: ids.orgA, details: { code: 'invalid_callback', reason: 'state_cookie_mismatch' } });
    expect(await ownerQuery(`SELECT 1 AS present FROM sso_sessions WHERE state = $1`, [state])).toEqual([{ present: 1 }]);
  });
});
