import request from 'supertest';
import { startTestApp, type TestApp } from '../../support/test-app';
import { startPamWorld, type PamWorld } from './pam-e2e.kit';

/**
 * GET /pam/rules serves rule lists kept per organization and rules version. Every write made
 * through another instance of the service must show in the next list on this one.
 */
describe('PAM rule list across instances', () => {
  let w: PamWorld;
  let other: TestApp;
  let otherToken: string;

  beforeAll(async () => {
    w = await startPamWorld();
    other = await startTestApp();
    otherToken = await other.token(w.ids.adminA, { mfa: true });
  }, 60_000);
  afterAll(async () => {
    await other.close();
    await w.close();
  });

  const onOther = () => {
    const auth = (r: request.Test) => r.set('Authorization', `Bearer ${otherToken}`);
    return {
      post: (path: string, body: object) => auth(request(other.http).post(`/api/v1${path}`)).send(body),
      patch: (path: string, body: object) => auth(request(other.http).patch(`/api/v1${path}`)).send(body),
      delete: (path: string) => auth(request(other.http).delete(`/api/v1${path}`)),
    };
  };
  const names = async (): Promise<string[]> => {
    const { body } = await w.as.adminA.get(`/pam/rules?orgId=${w.ids.orgA}`).expect(200);
    return (body.rules as { name: string }[]).map((r) => r.name);
  };

  it('shows a rule created, renamed and deleted through another instance in the very next list', async () => {
    const before = await names();
    expect(await names()).toEqual(before);

    const { body: created } = await onOther().post('/pam/rules', { name: 'made elsewhere', verdict: 'auto_deny', matchSigner: 'Elsewhere Ltd' }).expect(201);
    expect(await names()).toEqual([...before, 'made elsewhere']);

    await onOther().patch(`/pam/rules/${created.rule.id}`, { name: 'renamed elsewhere', priority: 1 }).expect(200);
    expect(await names()).toEqual(['renamed elsewhere', ...before]);

    await onOther().delete(`/pam/rules/${created.rule.id}`).expect(200);
    expect(await names()).toEqual(before);
  });

  it('lists each reachable organization once, in organization order, for a technician without an organization filter', async () => {
    await w.as.adminA.post('/pam/rules', { name: 'rule of A', verdict: 'auto_approve', matchSigner: 'A Inc.' }).expect(201);
    await w.as.adminB.post('/pam/rules', { name: 'rule of B', verdict: 'auto_approve', matchSigner: 'B Inc.' }).expect(201);
    const { body } = await w.as.tech.get('/pam/rules').expect(200);
    const orgs = (body.rules as { orgId: string }[]).map((r) => r.orgId);
    expect(new Set(orgs)).toEqual(new Set([w.ids.orgA, w.ids.orgB]));
    expect(orgs).toEqual([...orgs].sort());
  });
});
