import { tenantFixture } from '../../factories/tenant.factory';
import { browserlessAuthorize, OidcOpHandle } from '../../support/idp/oidc-op';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, BOOT_TIMEOUT_MS, callback, exchange, exchangeCodeOf, insertProvider, mintedThrough, opEndpoints, registerWithOp, startLogin, startOp, verifyDomain } from './sso-login.kit';

/**
 * RFC 9207 against the real OpenID Provider, which advertises `authorization_response_iss_parameter_supported`
 * and names itself with `iss` in every authorization response: the callback requires the parameter and
 * compares it with the provider's issuer before it reads anything else of the answer.
 */
describe('OIDC callback: the authorization response issuer (RFC 9207)', () => {
  let t: TestApp;
  let op: OidcOpHandle;
  let ids: Record<string, string>;
  let provider: string;
  let email: string;

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOp()]);
    await registerWithOp(op);
    const f = tenantFixture();
    ids = await t.seed(f);
    email = f.emails.adminA;
    await verifyDomain(ids.orgA, email.split('@')[1]);
    provider = await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op) });
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  /** A started login and the OP's answer to it, not yet delivered to the service (always the same IdP account). */
  async function answered() {
    await op.setAccount('admin-a-idp', { email, email_verified: true, name: 'Admin A' });
    await op.loginAs('admin-a-idp');
    const started = await startLogin(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(started.status).toBe(302);
    const idpRedirect = new URL(await browserlessAuthorize(started.location));
    return { started, idpRedirect };
  }

  async function expectRefusedWith(reason: string, idpRedirect: URL, cookie: string) {
    const before = await mintedThrough(provider);
    const cb = await callback(t, idpRedirect.toString(), cookie);
    expect(cb.location).toBe('/login?error=sso_error');
    expect(await mintedThrough(provider)).toEqual(before);
    const [audit] = await auditOf(provider, 'sso.login.rejected');
    expect(audit.details).toEqual({ code: 'sso_error', reason });
  }

  it('records at the login start that the provider advertises the parameter, and signs in when iss names the provider', async () => {
    const { started, idpRedirect } = await answered();
    const state = new URL(started.location).searchParams.get('state');
    const [row] = await ownerQuery<{ iss_required: boolean }>(`SELECT iss_required FROM sso_sessions WHERE state = $1`, [state]);
    expect(row.iss_required).toBe(true);
    expect(idpRedirect.searchParams.get('iss')).toBe(op.issuer);

    const cb = await callback(t, idpRedirect.toString(), started.cookie);
    expect(cb.location).toMatch(/^\/#ssoCode=/);
    await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
  });

  it('refuses an answer without iss, and mints nothing', async () => {
    const { started, idpRedirect } = await answered();
    idpRedirect.searchParams.delete('iss');
    await expectRefusedWith('iss_parameter_missing', idpRedirect, started.cookie);
  });

  it('refuses an answer naming another issuer (a mix-up), and mints nothing', async () => {
    const { started, idpRedirect } = await answered();
    idpRedirect.searchParams.set('iss', 'https://attacker-idp.example');
    await expectRefusedWith('iss_parameter_mismatch', idpRedirect, started.cookie);
  });

  it('refuses an issuer that differs only by a trailing slash, or is sent twice', async () => {
    const slash = await answered();
    slash.idpRedirect.searchParams.set('iss', `${op.issuer}/`);
    await expectRefusedWith('iss_parameter_mismatch', slash.idpRedirect, slash.started.cookie);

    const twice = await answered();
    twice.idpRedirect.searchParams.append('iss', op.issuer);
    await expectRefusedWith('iss_parameter_mismatch', twice.idpRedirect, twice.started.cookie);
  });

  it('checks the issuer before the rest of the answer: a forged error answer with a wrong iss is refused for its iss', async () => {
    const { started, idpRedirect } = await answered();
    const forged = new URL(idpRedirect.toString());
    forged.search = '';
    forged.searchParams.set('error', 'access_denied');
    forged.searchParams.set('state', idpRedirect.searchParams.get('state')!);
    forged.searchParams.set('iss', 'https://attacker-idp.example');
    await expectRefusedWith('iss_parameter_mismatch', forged, started.cookie);
  });

  it('keeps the login session usable when the state cookie does not match: the browser binding still comes first', async () => {
    const { started, idpRedirect } = await answered();
    idpRedirect.searchParams.delete('iss');
    const cb = await callback(t, idpRedirect.toString());
    expect(cb.location).toBe('/login?error=invalid_callback');
    idpRedirect.searchParams.set('iss', op.issuer);
    const good = await callback(t, idpRedirect.toString(), started.cookie);
    expect(good.location).toMatch(/^\/#ssoCode=/);
  });
});
