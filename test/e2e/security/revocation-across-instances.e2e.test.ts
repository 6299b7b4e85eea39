import request from 'supertest';
import { PASSWORD, tenantFixture } from '../../factories/tenant.factory';
import { PgListener } from '../../../src/infra/database/pg-listener.service';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

/**
 * A revocation or a change of access takes effect on every instance when it commits, not when each
 * instance's cache of callers expires (docs/security.md, "Revocation across instances"): both
 * instances here keep callers for a minute, and every change is made straight in the database, as
 * another instance, a job or an operator would, so no code of either instance is told of it.
 */
describe('revocation across instances', () => {
  let a: TestApp;
  let b: TestApp;
  let ids: Record<string, string>;
  const f = tenantFixture();
  const devices = f.devices!;

  beforeAll(async () => {
    a = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '60000' });
    b = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '60000' });
    ids = await a.seed(f);
    for (const t of [a, b]) await until(async () => t.app.get(PgListener).connected);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const login = async (email: string) => `Bearer ${(await request(a.http).post('/api/v1/auth/login').send({ email, password: PASSWORD }).expect(200)).body.accessToken}`;
  const latestSession = async (userId: string) =>
    (await ownerQuery<{ id: string }>(`SELECT id FROM sessions WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1`, [userId]))[0].id;
  const organizations = (auth: string) => request(b.http).get('/api/v1/organizations').set('Authorization', auth);

  it('refuses on the other instance a session revoked in the database, within the cache lifetime', async () => {
    const auth = await login(f.emails.adminB);
    await organizations(auth).expect(200);
    await ownerQuery(`UPDATE sessions SET revoked_at = now(), revoked_reason = 'test' WHERE id = $1`, [await latestSession(ids.adminB)]);
    await until(async () => (await organizations(auth)).status === 401);
  });

  it('refuses on the other instance a member whose membership is removed', async () => {
    const auth = await login(f.emails.readerA);
    await organizations(auth).expect(200);
    await ownerQuery(`DELETE FROM organization_memberships WHERE user_id = $1`, [ids.readerA]);
    await until(async () => (await organizations(auth)).status === 401);
  });

  it('follows a role losing a permission on the other instance', async () => {
    const auth = await login(f.emails.siteA1);
    await request(b.http).get('/api/v1/audit-logs').set('Authorization', auth).expect(200);
    await ownerQuery(`UPDATE roles SET permissions = array_remove(permissions, '*') || ARRAY['organizations:read'] WHERE id = $1`, [ids.adminRoleA]);
    await until(async () => (await request(b.http).get('/api/v1/audit-logs').set('Authorization', auth)).status === 403);
  });

  it('refuses on the other instance an agent whose token is revoked', async () => {
    const agent = devices.find((d) => d.key === 'deviceB1')!;
    const settings = () => request(b.http).get(`/api/v1/agents/${agent.agentId}/pam-settings`).set('Authorization', `Bearer ${agent.agentToken}`);
    await settings().expect(200);
    await ownerQuery(`UPDATE agents SET revoked_at = now() WHERE id = $1`, [agent.agentId]);
    await until(async () => (await settings()).status === 401);
  });
});

/** Polls until the check holds; 10 s, far inside the caches' one-minute lifetime. */
async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
