import { browserlessAuthorize } from '../../support/idp/oidc-op';
import type { RogueOidcIdp } from '../../support/idp/rogue-oidc-idp';
import { ownerQuery, TestApp } from '../../support/test-app';
import { auditOf, BOOT_TIMEOUT_MS, callback, exchange, exchangeCodeOf, mintedThrough, rogueProviderWorld, startLogin } from '../sso-login/sso-login.kit';

/**
 * RFC 9207 §2.4 with a provider that does not advertise `authorization_response_iss_parameter_supported`
 * (the rogue IdP's discovery document leaves it out and its answers carry no `iss`): an `iss` that is
 * present must still name the provider, so an attacker who relays another IdP's answer to this callback
 * cannot sign in by adding the other IdP's `iss`; an answer without `iss` still signs in.
 */
describe('OIDC callback: iss from a provider that does not advertise it (RFC 9207 §2.4)', () => {
  let t: TestApp;
  let idp: RogueOidcIdp;
  let ids: Record<string, string>;
  let provider: string;

  beforeAll(async () => {
    ({ t, idp, ids, provider } = await rogueProviderWorld());
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), idp.stop()]);
  });

  /** A started login and the IdP's answer to it, not yet delivered to the service. */
  async function answered() {
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(started.status).toBe(302);
    const idpRedirect = new URL(await browserlessAuthorize(started.location));
    return { started, idpRedirect };
  }

  it('records at the login start that the provider does not advertise the parameter, and signs in without iss', async () => {
    const { started, idpRedirect } = await answered();
    const state = new URL(started.location).searchParams.get('state');
    const [row] = await ownerQuery<{ iss_required: boolean }>(`SELECT iss_required FROM sso_sessions WHERE state = $1`, [state]);
    expect(row.iss_required).toBe(false);
    expect(idpRedirect.searchParams.has('iss')).toBe(false);

    const cb = await callback(t, idpRedirect.toString(), started.cookie);
    expect(cb.location).toMatch(/^\/#ssoCode=/);
    await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
  });

  it('signs in when iss names the provider', async () => {
    const { started, idpRedirect } = await answered();
    idpRedirect.searchParams.set('iss', idp.issuer);
    const cb = await callback(t, idpRedirect.toString(), started.cookie);
    expect(cb.location).toMatch(/^\/#ssoCode=/);
    await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
  });

  it.each([
    ['another issuer (a mix-up)', (u: URL) => u.searchParams.set('iss', 'https://evil.example')],
    ['the issuer with a trailing slash', (u: URL) => u.searchParams.set('iss', `${idp.issuer}/`)],
    ['an empty iss', (u: URL) => u.searchParams.set('iss', '')],
    ['the issuer sent twice', (u: URL) => (u.searchParams.append('iss', idp.issuer), u.searchParams.append('iss', idp.issuer))],
  ])('refuses %s before the code is redeemed, mints nothing, and audits iss_parameter_mismatch', async (_name, tamper) => {
    const { started, idpRedirect } = await answered();
    tamper(idpRedirect);
    const before = await mintedThrough(provider);
    const tokenRequests = idp.tokenRequests.length;

    const cb = await callback(t, idpRedirect.toString(), started.cookie);
    expect(cb.location).toBe('/login?error=sso_error');
    expect(await mintedThrough(provider)).toEqual(before);
    expect(idp.tokenRequests.length).toBe(tokenRequests);
    const [audit] = await auditOf(provider, 'sso.login.rejected');
    expect(audit.details).toEqual({ code: 'sso_error', reason: 'iss_parameter_mismatch' });
  });
});
