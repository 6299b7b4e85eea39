import request from 'supertest';
import { tenantFixture } from '../factories/tenant.factory';
import { browserlessAuthorize, OidcOpHandle } from '../support/idp/oidc-op';
import { createTestSamlIdp, TestSamlIdp } from '../support/idp/saml-idp';
import { ownerQuery, TestApp } from '../support/test-app';
import { postAcs, startSamlLogin, insertSamlProvider } from '../e2e/sso-saml/saml.kit';
import { callback, exchange, exchangeCodeOf, insertProvider, opEndpoints, registerWithOp, startLogin, startOp, verifyDomain } from '../e2e/sso-login/sso-login.kit';
import { BOOT_TIMEOUT_MS, closeInstances, startInstances } from './scale-out.kit';

/**
 * A browser's sign-in whose steps a load balancer sends to different instances: the login start,
 * the IdP's answer (OIDC callback or SAML ACS) and the exchange of the code each on another
 * instance, every instance's request role through PgBouncer in transaction mode. Only the
 * database carries the login session, the SAML request id, the consumed assertion and the code.
 */
describe('SSO sign-in started on one instance and finished on another, through PgBouncer (transaction pooling)', () => {
  let instances: TestApp[];
  let op: OidcOpHandle;
  let idp: TestSamlIdp;
  let f: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;
  const [A, B, C] = [0, 1, 2];
  const me = (t: TestApp, accessToken: string) => request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${accessToken}`);

  beforeAll(async () => {
    [instances, op] = await Promise.all([startInstances(3), startOp()]);
    await registerWithOp(op);
    idp = createTestSamlIdp();
    f = tenantFixture();
    ids = await instances[A].seed(f);
    // Matching the seeded accounts by email needs each organization's proof of the users' domain.
    const domain = f.emails.adminA.split('@')[1];
    await verifyDomain(ids.orgA, domain);
    await verifyDomain(ids.orgB, domain);
    // OIDC for organization A, SAML for organization B.
    await insertProvider(instances[A], { orgId: ids.orgA, name: 'Corp IdP', ...opEndpoints(op) });
    await insertSamlProvider({ orgId: ids.orgB, idp, name: 'Corp SAML' });
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([closeInstances(instances ?? []), op?.stop()]);
  });

  it('signs in through OIDC: start on A, callback on B, code exchanged on C; the state and the code are single use on every instance', async () => {
    await op.setAccount('admin-a-idp', { email: f.emails.adminA, email_verified: true, name: 'Admin A' });
    await op.loginAs('admin-a-idp');
    const started = await startLogin(instances[A], `/api/v1/sso/login/${ids.orgA}?redirect=/devices`);
    expect(started.status).toBe(302);
    const idpRedirect = await browserlessAuthorize(started.location);

    const cb = await callback(instances[B], idpRedirect, started.cookie);
    expect(cb.status).toBe(302);
    expect(cb.location).toMatch(/^\/devices#ssoCode=[A-Za-z0-9_-]{43}$/);
    const code = exchangeCodeOf(cb.location)!;

    const pair = await exchange(instances[C], code).expect(200);
    expect((await me(instances[A], pair.body.accessToken).expect(200)).body.user.id).toBe(ids.adminA);

    // The state was spent on B and the code on C: A and B refuse them.
    expect((await callback(instances[A], idpRedirect, started.cookie)).location).toBe('/login?error=session_expired');
    expect((await exchange(instances[B], code).expect(400)).body.code).toBe('invalid_exchange_code');
  });

  it('signs in through SAML: AuthnRequest from A, ACS on B, code exchanged on C; the response posted again on C is refused', async () => {
    const started = await startSamlLogin(instances[A], `/api/v1/sso/saml/login/${ids.orgB}`);
    expect(started.status).toBe(302);
    const response = idp.buildResponseFor(started.request!, { nameId: f.emails.adminB });
    const form = { SAMLResponse: response, RelayState: started.request!.relayState };

    const acs = await postAcs(instances[B], form, started.cookie);
    expect(acs.status).toBe(302);
    expect(acs.location).toMatch(/^\/#ssoCode=[A-Za-z0-9_-]{43}$/);
    // The request id the ACS answered is spent, and the assertion recorded, in the shared database.
    expect(await ownerQuery(`SELECT 1 FROM saml_request_cache WHERE request_id = $1`, [started.request!.id])).toEqual([]);

    const pair = await exchange(instances[C], exchangeCodeOf(acs.location)!).expect(200);
    expect((await me(instances[B], pair.body.accessToken).expect(200)).body.user.id).toBe(ids.adminB);

    const replay = await postAcs(instances[C], form, started.cookie);
    expect(replay.location).toBe('/login?error=session_expired');
  });
});
