import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { RogueOidcIdp, startRogueOidcIdp } from '../../support/idp/rogue-oidc-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { api, Api } from '../sso/sso-test-kit';
import { BOOT_TIMEOUT_MS, exchange, exchangeCodeOf, insertProvider, rogueEndpoints, roundTrip, verifyDomain } from '../sso-login/sso-login.kit';

/**
 * Issue 13 item 13: an administrator takes an identity provider out of service (it was
 * compromised, or the organization left it), but everything it signed in stays signed in. Each
 * test signs the victim in through the provider, changes the provider as the administrator, and
 * then uses the victim's access and refresh tokens as whoever stole them would.
 */
describe('sessions minted by an SSO provider end with the provider', () => {
  let t: TestApp;
  let idp: RogueOidcIdp;
  let other: RogueOidcIdp;
  let f: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;
  let admin: Api;

  beforeAll(async () => {
    [t, idp, other] = await Promise.all([startTestApp(), startRogueOidcIdp(), startRogueOidcIdp()]);
    f = tenantFixture();
    ids = await t.seed(f);
    await verifyDomain(ids.orgA, f.emails.readerA.split('@')[1]);
    admin = api(t, await t.token(ids.adminA, { mfa: true }));
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), idp.stop(), other.stop()]);
  });

  /** Organization A's only active provider, on the test IdP. */
  async function freshProvider(): Promise<string> {
    await ownerQuery(`UPDATE sso_providers SET status = 'inactive' WHERE org_id = $1`, [ids.orgA]);
    return insertProvider(t, { orgId: ids.orgA, ...rogueEndpoints(idp), autoProvision: false });
  }

  /** The victim's token pair from a sign-in through organization A's active provider. */
  async function victimSignsIn(): Promise<{ accessToken: string; refreshToken: string }> {
    idp.setClaims({ sub: 'victim', email: f.emails.readerA, email_verified: true });
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}`);
    expect(cb.location).toMatch(/^\/#ssoCode=/);
    return (await exchange(t, exchangeCodeOf(cb.location)!).expect(200)).body;
  }

  const me = (accessToken: string) => request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${accessToken}`);
  const refresh = (refreshToken: string) => request(t.http).post('/api/v1/auth/refresh').send({ refreshToken });

  async function expectEnded(pair: { accessToken: string; refreshToken: string }): Promise<void> {
    expect((await me(pair.accessToken)).status).toBe(401);
    expect((await refresh(pair.refreshToken)).status).toBe(401);
  }

  async function auditDetails(provider: string, action: string): Promise<Record<string, unknown>> {
    const [row] = await ownerQuery<{ details: Record<string, unknown> }>(
      `SELECT details FROM audit_logs WHERE resource_id = $1 AND action = $2 ORDER BY created_at DESC LIMIT 1`,
      [provider, action],
    );
    return row.details;
  }

  it('deactivating the provider ends the sessions it minted: the access and the refresh token stop working', async () => {
    const provider = await freshProvider();
    const pair = await victimSignsIn();
    await me(pair.accessToken).expect(200);

    await admin.post(`/sso/providers/${provider}/status`, { status: 'inactive' }).expect(200);

    await expectEnded(pair);
    expect(await auditDetails(provider, 'sso.provider.status.update')).toMatchObject({ from: 'active', to: 'inactive', sessionsRevoked: 1 });
  });

  it('switching the provider to testing ends its sessions too', async () => {
    const provider = await freshProvider();
    const pair = await victimSignsIn();
    await admin.post(`/sso/providers/${provider}/status`, { status: 'testing' }).expect(200);
    await expectEnded(pair);
  });

  it('deleting the provider ends the sessions it minted', async () => {
    const provider = await freshProvider();
    const first = await victimSignsIn();
    const second = await victimSignsIn();

    await admin.delete(`/sso/providers/${provider}`).expect(200);

    await expectEnded(first);
    await expectEnded(second);
    expect(await auditDetails(provider, 'sso.provider.delete')).toMatchObject({ sessionsRevoked: 2 });
  });

  it('changing the client id ends the sessions it minted', async () => {
    const provider = await freshProvider();
    const pair = await victimSignsIn();

    await admin.patch(`/sso/providers/${provider}`, { clientId: 'another-client' }).expect(200);

    await expectEnded(pair);
    expect(await auditDetails(provider, 'sso.provider.update')).toMatchObject({ changed: ['clientId'], sessionsRevoked: 1 });
  });

  it('changing the issuer ends the sessions it minted', async () => {
    const provider = await freshProvider();
    const pair = await victimSignsIn();

    await admin.patch(`/sso/providers/${provider}`, { issuer: other.issuer }).expect(200);

    await expectEnded(pair);
    expect(await auditDetails(provider, 'sso.provider.update')).toMatchObject({ sessionsRevoked: 1 });
  });

  it('leaves the sessions alone when the change does not concern who the IdP is (a new name)', async () => {
    const provider = await freshProvider();
    const pair = await victimSignsIn();
    await admin.patch(`/sso/providers/${provider}`, { name: 'Renamed IdP' }).expect(200);
    await me(pair.accessToken).expect(200);
    expect(await auditDetails(provider, 'sso.provider.update')).toMatchObject({ changed: ['name'], sessionsRevoked: 0 });
  });

  it('leaves the sessions of other providers and password sign-ins alone', async () => {
    await freshProvider();
    const keptPair = await victimSignsIn();
    const password = await t.token(ids.readerA);
    const ended = await insertProvider(t, { orgId: ids.orgB, ...rogueEndpoints(idp), autoProvision: false });
    await verifyDomain(ids.orgB, f.emails.adminB.split('@')[1]);
    idp.setClaims({ sub: 'admin-b', email: f.emails.adminB, email_verified: true });
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgB}`);
    const adminBPair = (await exchange(t, exchangeCodeOf(cb.location)!).expect(200)).body;

    const adminB = api(t, await t.token(ids.adminB, { mfa: true }));
    await adminB.post(`/sso/providers/${ended}/status`, { status: 'inactive' }).expect(200);

    await expectEnded(adminBPair);
    await me(keptPair.accessToken).expect(200);
    await me(password).expect(200);
    expect((await refresh(keptPair.refreshToken)).status).toBe(200);
  });
});
