import request from 'supertest';
import { TestDnsServer } from '../../support/dns/test-dns-server';
import { startTestApp, TestApp } from '../../support/test-app';
import { api, Api, ssoFixture } from '../sso/sso-test-kit';
import { insertProvider } from '../sso-login/sso-login.kit';

/**
 * Issue 13 item 14b: an administrator uses the SSO provider routes as a network probe. Naming an
 * internal host as an issuer, endpoint or metadata URL, they read from the error whether the
 * service's resolver knows the name (`private_address`) or not (`dns_failure`), and so map the
 * internal network. Every caller-visible answer must be the same for both; the precise reason
 * stays in the server log.
 */
describe('SSO discovery errors do not map the internal network', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let ids: Record<string, string>;
  let admin: Api;

  // An internal name the service's resolver knows, and one nobody knows.
  const INTERNAL = 'db.corp.internal.test';
  const MISSING = 'nothing-here.corp.internal.test';

  beforeAll(async () => {
    dns = new TestDnsServer();
    await dns.start();
    dns.setA(INTERNAL, '10.20.30.40');
    t = await startTestApp({ DNS_SERVERS: dns.address });
    ids = await t.seed(ssoFixture());
    admin = api(t, await t.token(ids.adminA, { mfa: true }));
  });
  afterAll(async () => {
    await t.close();
    await dns.stop();
  });

  /** The body without what differs per request. */
  const comparable = (body: Record<string, unknown>) => {
    const { requestId: _requestId, ...rest } = body;
    return rest;
  };

  it('answers the same creation warning for an internal host and an unknown one', async () => {
    const internal = await admin.post('/sso/providers', { name: 'Probe', type: 'oidc', issuer: `https://${INTERNAL}` }).expect(201);
    const missing = await admin.post('/sso/providers', { name: 'Probe', type: 'oidc', issuer: `https://${MISSING}` }).expect(201);
    expect(internal.body.warnings).toEqual(missing.body.warnings);
    expect(JSON.stringify(internal.body.warnings)).not.toMatch(/private_address|dns_failure|could not resolve|10\.20|internal\.test/i);
  });

  it('answers the same error when an issuer change names an internal host or an unknown one', async () => {
    const created = await admin.post('/sso/providers', { name: 'Target', type: 'oidc' }).expect(201);
    const internal = await admin.patch(`/sso/providers/${created.body.provider.id}`, { issuer: `https://${INTERNAL}` }).expect(400);
    const missing = await admin.patch(`/sso/providers/${created.body.provider.id}`, { issuer: `https://${MISSING}` }).expect(400);
    expect(comparable(internal.body)).toEqual(comparable(missing.body));
    expect(internal.body.code).toBe('discovery_failed');
    expect(internal.body.error).not.toContain(INTERNAL);
  });

  it('answers the same error for a manually entered endpoint on an internal host or an unknown one', async () => {
    const internal = await admin.post('/sso/providers', { name: 'Manual', type: 'oidc', tokenUrl: `https://${INTERNAL}/token` }).expect(400);
    const missing = await admin.post('/sso/providers', { name: 'Manual', type: 'oidc', tokenUrl: `https://${MISSING}/token` }).expect(400);
    expect(comparable(internal.body)).toEqual(comparable(missing.body));
    expect(internal.body).toMatchObject({ code: 'invalid_endpoint', field: 'tokenUrl' });
  });

  it('answers the same test result, and audits the same reason, for an internal host or an unknown one', async () => {
    const results: { tested: { reachable: boolean }; audit: RegExpMatchArray | null }[] = [];
    for (const host of [INTERNAL, MISSING]) {
      const created = await admin.post('/sso/providers', { name: 'Tested', type: 'saml', ssoUrl: `https://${host}/sso` }).expect(201);
      const tested = await admin.post(`/sso/providers/${created.body.provider.id}/test`).expect(200);
      const audit = await admin.get(`/audit-logs?action=sso.provider.test&resourceId=${created.body.provider.id}`).expect(200);
      results.push({ tested: tested.body, audit: JSON.stringify(audit.body).match(/"reason":"[^"]*"/g) });
    }
    expect(results[0]).toEqual(results[1]);
    expect(results[0].tested.reachable).toBe(false);
  });

  it('answers the same OIDC test result for an internal issuer or an unknown one', async () => {
    const bodies: unknown[] = [];
    for (const host of [INTERNAL, MISSING]) {
      const created = await admin.post('/sso/providers', { name: 'Tested', type: 'oidc', issuer: `https://${host}` }).expect(201);
      bodies.push((await admin.post(`/sso/providers/${created.body.provider.id}/test`).expect(200)).body);
    }
    expect(bodies[0]).toEqual(bodies[1]);
  });

  it('answers the same error for SAML metadata fetched from an internal host or an unknown one', async () => {
    const internal = await admin.post('/sso/providers', { name: 'Meta', type: 'saml', idpMetadataUrl: `https://${INTERNAL}/metadata` }).expect(400);
    const missing = await admin.post('/sso/providers', { name: 'Meta', type: 'saml', idpMetadataUrl: `https://${MISSING}/metadata` }).expect(400);
    expect(comparable(internal.body)).toEqual(comparable(missing.body));
  });

  it('answers an anonymous login start the same when a stored endpoint now names an internal host or an unknown one', async () => {
    const answers: Record<string, unknown>[] = [];
    for (const host of [INTERNAL, MISSING]) {
      const org = (await t.seed({ partners: [{ key: 'p', name: `P ${host}` }], organizations: [{ key: 'o', partner: 'p', name: `O ${host}` }] })).o;
      await insertProvider(t, {
        orgId: org,
        issuer: `https://${host}`,
        clientId: 'c',
        clientSecret: 'secret-secret-secret',
        authorizationUrl: `https://${host}/authorize`,
        tokenUrl: `https://${host}/token`,
        userInfoUrl: `https://${host}/userinfo`,
        jwksUrl: `https://${host}/jwks`,
      });
      const res = await request(t.http).get(`/api/v1/sso/login/${org}`).set('X-Forwarded-For', `10.77.0.${answers.length + 1}`);
      expect(res.status).toBe(400);
      answers.push(comparable(res.body));
    }
    expect(answers[0]).toEqual(answers[1]);
  });
});
