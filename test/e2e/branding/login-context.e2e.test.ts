import request from 'supertest';
import { tenantFixture, uniq } from '../../factories/tenant.factory';
import { IsolatedApp, startIsolatedApp } from '../../browser/support/isolated-app';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

const BRANDING = { logoUrl: 'https://cdn.example.com/acme.png', accentColor: '#0f766e', headline: 'Acme IT' };
const CONTEXT = '/api/v1/auth/login-context';

type Http = Parameters<typeof request>[0];

async function putBranding(http: Http, token: string, body: object = BRANDING): Promise<void> {
  await request(http).put('/api/v1/partners/me/login-branding').set('Authorization', `Bearer ${token}`).send(body).expect(200);
}

/**
 * GET /auth/login-context carries the partner login branding only on a self-hosted deployment
 * with exactly one partner (spec 1.6.2, 1.9.2). The shared test database always holds many
 * partners, so the single-partner deployment runs on a database of its own.
 */
describe('login page branding in the login context', () => {
  describe('self-hosted, exactly one partner', () => {
    let app: IsolatedApp;
    let http: Http;
    let ids: Record<string, string>;

    beforeAll(async () => {
      app = await startIsolatedApp();
      http = app.app.getHttpServer();
    });
    afterAll(() => app.close());

    it('is empty while the deployment has no partner', async () => {
      const res = await request(http).get(CONTEXT).expect(200);
      expect(res.body).toEqual({ branding: null, partnerSso: null });
    });

    it('carries no branding for a partner whose branding is empty', async () => {
      ids = await app.seed(tenantFixture(uniq('solo')));
      await putBranding(http, await app.token(ids.tech, { mfa: true }), {});
      expect((await request(http).get(CONTEXT).expect(200)).body.branding).toBeNull();
    });

    it("carries the partner's branding, cacheable for a minute", async () => {
      await putBranding(http, await app.token(ids.tech, { mfa: true }));
      const res = await request(http).get(CONTEXT).expect(200);
      expect(res.body.branding).toEqual(BRANDING);
      expect(res.headers['cache-control']).toBe('public, max-age=60');
    });

    it('follows a replace: cleared fields are null in the context too', async () => {
      await putBranding(http, await app.token(ids.tech, { mfa: true }), { headline: 'Only a headline' });
      expect((await request(http).get(CONTEXT).expect(200)).body.branding).toEqual({ logoUrl: null, accentColor: null, headline: 'Only a headline' });
    });

    it('carries nothing once a second partner exists', async () => {
      await app.ownerQuery(`INSERT INTO partners (name) VALUES ($1)`, [`Second ${uniq('p')}`]);
      const res = await request(http).get(CONTEXT).expect(200);
      expect(res.body).toEqual({ branding: null, partnerSso: null });
    });
  });

  describe('hosted (IS_HOSTED=true), exactly one partner', () => {
    let app: IsolatedApp;

    beforeAll(async () => {
      app = await startIsolatedApp({ IS_HOSTED: 'true' });
      const ids = await app.seed(tenantFixture(uniq('hosted')));
      await putBranding(app.app.getHttpServer(), await app.token(ids.tech, { mfa: true }));
    });
    afterAll(() => app.close());

    it('never carries the branding, though the partner has one', async () => {
      const [row] = await app.ownerQuery<{ headline: string }>(`SELECT headline FROM partner_login_branding`);
      expect(row.headline).toBe(BRANDING.headline);
      const res = await request(app.app.getHttpServer()).get(CONTEXT).expect(200);
      expect(res.body).toEqual({ branding: null, partnerSso: null });
    });
  });

  describe('self-hosted with many partners (the shared test database)', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp({ IS_HOSTED: 'false' });
      for (const label of [uniq('many-a'), uniq('many-b')]) {
        const ids = await t.seed(tenantFixture(label));
        await putBranding(t.http, await t.token(ids.tech, { mfa: true }));
      }
    });
    afterAll(() => t.close());

    it('carries no partner branding', async () => {
      const [{ n }] = await ownerQuery<{ n: number }>(`SELECT count(*)::int AS n FROM partners`);
      expect(n).toBeGreaterThan(1);
      const res = await request(t.http).get(CONTEXT).expect(200);
      expect(res.body).toEqual({ branding: null, partnerSso: null });
    });
  });
});
