import request from 'supertest';
import { tenantFixture, uniq } from '../../factories/tenant.factory';
import { OidcOpHandle } from '../../support/idp/oidc-op';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { exchangeCodeOf, freshIp, insertProvider, opEndpoints, registerWithOp, roundTrip, verifyDomain, BOOT_TIMEOUT_MS, startOp } from './sso-login.kit';

/** Spec 1.5 (docs/sso-login.md): POST /api/v1/auth/sso-discovery. */
describe('SSO discovery by email', () => {
  let t: TestApp;
  let op: OidcOpHandle;

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOp()]);
    await registerWithOp(op);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  const discover = (email: unknown, ip = freshIp()) => request(t.http).post('/api/v1/auth/sso-discovery').set('X-Forwarded-For', ip).send({ email });

  /** A tenant whose organization A has verified its own domain and has an enforcing OIDC provider. */
  async function enforcingTenant() {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const domain = f.emails.adminA.split('@')[1];
    await verifyDomain(ids.orgA, domain);
    await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), name: 'Corp Sign-In', enforceSso: true });
    return { f, ids, domain };
  }

  it('names the provider of the organization that verified the domain, uncached', async () => {
    const { ids, domain } = await enforcingTenant();
    const res = await discover(`anyone@${domain}`).expect(200);
    expect(res.body).toEqual({ sso: { providerName: 'Corp Sign-In', loginUrl: `/api/v1/sso/login/${ids.orgA}`, enforceSSO: true } });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('answers an existing and a made-up address at one domain identically, whatever their case', async () => {
    const { f, domain } = await enforcingTenant();
    const existing = await discover(f.emails.readerA).expect(200);
    const madeUp = await discover(`No.Such.Person@${domain.toUpperCase()}`).expect(200);
    expect(madeUp.body).toEqual(existing.body);
    expect(existing.body.sso).not.toBeNull();
  });

  it('leads to a working sign-in through the loginUrl it names', async () => {
    const { f, domain } = await enforcingTenant();
    const { body } = await discover(`x@${domain}`).expect(200);
    const sub = uniq('disc-user');
    await op.setAccount(sub, { email: f.emails.readerA, email_verified: true });
    await op.loginAs(sub);
    const cb = await roundTrip(t, body.sso.loginUrl);
    expect(exchangeCodeOf(cb.location)).not.toBeNull();
  });

  it('answers null for a domain the organization has not verified (allowedDomains does not count)', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const domain = f.emails.adminA.split('@')[1];
    await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), enforceSso: true, allowedDomains: domain });
    expect((await discover(`a@${domain}`).expect(200)).body).toEqual({ sso: null });
  });

  it('answers null when two organizations verified the same domain', async () => {
    const { domain } = await enforcingTenant();
    const other = await t.seed(tenantFixture());
    await verifyDomain(other.orgA, domain);
    expect((await discover(`a@${domain}`).expect(200)).body).toEqual({ sso: null });
  });

  it('answers null when the provider does not enforce SSO', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const domain = f.emails.adminA.split('@')[1];
    await verifyDomain(ids.orgA, domain);
    await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), enforceSso: false });
    expect((await discover(`a@${domain}`).expect(200)).body).toEqual({ sso: null });
  });

  it('answers null when the oldest active provider is SAML, even with a newer enforcing OIDC one', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const domain = f.emails.adminA.split('@')[1];
    await verifyDomain(ids.orgA, domain);
    await insertProvider(t, { orgId: ids.orgA, type: 'saml', enforceSso: true, createdAt: '2024-01-01T00:00:00Z' });
    await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), enforceSso: true, createdAt: '2025-01-01T00:00:00Z' });
    expect((await discover(`a@${domain}`).expect(200)).body).toEqual({ sso: null });
  });

  it('names the oldest active provider when several are active', async () => {
    const f = tenantFixture();
    const ids = await t.seed(f);
    const domain = f.emails.adminA.split('@')[1];
    await verifyDomain(ids.orgA, domain);
    await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), name: 'Newer', enforceSso: true, createdAt: '2025-01-01T00:00:00Z' });
    await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op), name: 'Older', enforceSso: true, createdAt: '2024-01-01T00:00:00Z' });
    expect((await discover(`a@${domain}`).expect(200)).body.sso.providerName).toBe('Older');
  });

  it('answers null for a suspended organization, and when no provider is active', async () => {
    const { ids, domain } = await enforcingTenant();
    await ownerQuery(`UPDATE sso_providers SET status = 'testing' WHERE org_id = $1`, [ids.orgA]);
    expect((await discover(`a@${domain}`).expect(200)).body).toEqual({ sso: null });
    await ownerQuery(`UPDATE sso_providers SET status = 'active' WHERE org_id = $1`, [ids.orgA]);
    await ownerQuery(`UPDATE organizations SET status = 'suspended' WHERE id = $1`, [ids.orgA]);
    expect((await discover(`a@${domain}`).expect(200)).body).toEqual({ sso: null });
  });

  it.each(['not-an-email', 'a@127.0.0.1', 'a@localhost', '', 'a@b@c.example'])('answers null for the malformed address %j', async (email) => {
    expect((await discover(email).expect(200)).body).toEqual({ sso: null });
  });

  it('rejects a body without an email string with 400', async () => {
    expect((await discover(undefined).expect(400)).body.code).toBe('validation_failed');
    expect((await discover(42).expect(400)).body.code).toBe('validation_failed');
    expect((await discover('a'.repeat(321)).expect(400)).body.code).toBe('validation_failed');
  });

  it('allows 20 lookups per 5 minutes per client, then 429', async () => {
    const ip = freshIp();
    for (let i = 0; i < 20; i++) await discover(`a${i}@example.com`, ip).expect(200);
    const limited = await discover('a@example.com', ip).expect(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});
