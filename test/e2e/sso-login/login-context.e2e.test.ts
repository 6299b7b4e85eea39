import request from 'supertest';
import { tenantFixture, uniq } from '../../factories/tenant.factory';
import { IsolatedApp, startIsolatedApp } from '../../browser/support/isolated-app';
import { CookieJar } from '../../support/idp/cookie-jar';
import { browserlessAuthorize, OidcOpHandle } from '../../support/idp/oidc-op';
import { startTestApp, TestApp } from '../../support/test-app';
import { exchangeCodeOf, insertProvider, opEndpoints, registerWithOp, BOOT_TIMEOUT_MS, startOp } from './sso-login.kit';

/**
 * GET /api/v1/auth/login-context: the partner sign-in button appears only on a self-hosted
 * deployment with exactly one partner (spec 1.6.2). The shared test database holds many
 * partners, so the single-partner deployment runs on a database of its own.
 */
describe('login context: the partner sign-in button', () => {
  let op: OidcOpHandle;
  beforeAll(async () => {
    op = await startOp();
  }, BOOT_TIMEOUT_MS);
  afterAll(() => op.stop());

  describe('on a deployment with several partners', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
      const [ids] = await Promise.all([t.seed(tenantFixture()), t.seed(tenantFixture())]);
      await insertProvider(t, { partnerId: ids.partner, ...opEndpoints(op) });
    }, BOOT_TIMEOUT_MS);
    afterAll(() => t.close());

    it('shows neither button nor branding, cacheable for a minute', async () => {
      const res = await request(t.http).get('/api/v1/auth/login-context').expect(200);
      expect(res.body).toEqual({ branding: null, partnerSso: null });
      expect(res.headers['cache-control']).toBe('public, max-age=60');
    });
  });

  describe('self-hosted with exactly one partner', () => {
    let iso: IsolatedApp;
    let ids: Record<string, string>;
    let f: ReturnType<typeof tenantFixture>;
    const context = () => request(iso.app.getHttpServer()).get('/api/v1/auth/login-context').expect(200);

    beforeAll(async () => {
      iso = await startIsolatedApp();
      await registerWithOp(op, `${iso.baseUrl}/api/v1/sso/callback`);
      f = tenantFixture(uniq('solo'));
      ids = await iso.seed(f);
    }, BOOT_TIMEOUT_MS);
    afterAll(() => iso.close());

    it('shows no button while the partner has no active provider (organization providers do not count)', async () => {
      await insertProvider(iso, { partnerId: ids.partner, ...opEndpoints(op), status: 'testing' }, iso.ownerQuery);
      await insertProvider(iso, { orgId: ids.orgA, ...opEndpoints(op) }, iso.ownerQuery);
      expect((await context()).body.partnerSso).toBeNull();
    });

    it('hides the button when the oldest active partner provider is SAML', async () => {
      const saml = await insertProvider(iso, { partnerId: ids.partner, type: 'saml', createdAt: '2020-01-01T00:00:00Z' }, iso.ownerQuery);
      expect((await context()).body.partnerSso).toBeNull();
      await iso.ownerQuery(`DELETE FROM sso_providers WHERE id = $1`, [saml]);
    });

    it('targets the oldest active OIDC partner provider, with its enforcement flag', async () => {
      await insertProvider(iso, { partnerId: ids.partner, ...opEndpoints(op), name: 'Newer', createdAt: '2025-06-01T00:00:00Z' }, iso.ownerQuery);
      await insertProvider(iso, { partnerId: ids.partner, ...opEndpoints(op), name: 'MSP Sign-In', enforceSso: true, createdAt: '2025-01-01T00:00:00Z' }, iso.ownerQuery);
      const res = await context();
      expect(res.body.partnerSso).toEqual({ providerName: 'MSP Sign-In', loginUrl: `/api/v1/sso/login/partner/${ids.partner}`, enforceSSO: true });
      expect(res.headers['cache-control']).toBe('public, max-age=60');
    });

    it('signs a technician in through the button, as a browser would', async () => {
      const { partnerSso } = (await context()).body;
      await op.setAccount('solo-tech', { email: f.emails.tech, email_verified: true });
      await op.loginAs('solo-tech');
      const jar = new CookieJar();
      const startUrl = `${iso.baseUrl}${partnerSso.loginUrl}`;
      const start = await fetch(startUrl, { redirect: 'manual' });
      jar.storeFrom(startUrl, start);
      const back = await browserlessAuthorize(start.headers.get('location')!, { jar });
      expect(jar.get('svc_sso_state', back)).toBeDefined();
      const cb = await fetch(back, { redirect: 'manual', headers: jar.requestHeaders(back) });
      expect(cb.status).toBe(302);
      const code = exchangeCodeOf(cb.headers.get('location')!);
      const pair = await request(iso.app.getHttpServer()).post('/api/v1/sso/exchange').send({ code }).expect(200);
      const me = await request(iso.app.getHttpServer()).get('/api/v1/auth/me').set('Authorization', `Bearer ${pair.body.accessToken}`).expect(200);
      expect(me.body.session).toMatchObject({ scope: 'partner', partnerId: ids.partner });
    });
  });

  describe('hosted (IS_HOSTED=true) with exactly one partner', () => {
    let iso: IsolatedApp;
    beforeAll(async () => {
      iso = await startIsolatedApp({ IS_HOSTED: 'true' });
      const ids = await iso.seed(tenantFixture(uniq('hosted')));
      await insertProvider(iso, { partnerId: ids.partner, ...opEndpoints(op) }, iso.ownerQuery);
    }, BOOT_TIMEOUT_MS);
    afterAll(() => iso.close());

    it('never shows the button', async () => {
      const res = await request(iso.app.getHttpServer()).get('/api/v1/auth/login-context').expect(200);
      expect(res.body).toEqual({ branding: null, partnerSso: null });
    });
  });
});
