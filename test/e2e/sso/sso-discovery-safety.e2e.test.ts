import { loadConfig } from '../../../src/infra/config/app-config';
import { ProviderDiscoveryService } from '../../../src/modules/sso/discovery/provider-discovery.service';
import { DiscoveryError } from '../../../src/infra/net/net.errors';
import { SsoProviderLookupService } from '../../../src/modules/sso/providers/sso-provider-lookup.service';
import { TestDnsServer } from '../../support/dns/test-dns-server';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { Api, api, FakeIssuer, ssoFixture, startFakeIssuer } from './sso-test-kit';

/**
 * Spec 1.2.5 through the code path production uses: the app resolves every IdP host with
 * the DNS server named by DNS_SERVERS (here a real one on loopback that the test controls)
 * and fetches with the service's safe HTTP client.
 */
describe('OIDC discovery safety', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let idp: FakeIssuer;
  let ids: Record<string, string>;
  let admin: Api;

  const PUBLIC_V4 = '93.184.216.34';
  const hostile: [string, (d: TestDnsServer, name: string) => void][] = [
    ['127.0.0.1 (loopback)', (d, n) => d.setA(n, '127.0.0.1')],
    ['10.0.0.5 (private)', (d, n) => d.setA(n, '10.0.0.5')],
    ['169.254.169.254 (cloud metadata)', (d, n) => d.setA(n, '169.254.169.254')],
    ['100.64.0.1 (carrier-grade NAT)', (d, n) => d.setA(n, '100.64.0.1')],
    ['::1 (IPv6 loopback)', (d, n) => d.setAAAA(n, '::1')],
    ['fd00::1 (unique-local)', (d, n) => d.setAAAA(n, 'fd00::1')],
    ['fe80::1 (link-local)', (d, n) => d.setAAAA(n, 'fe80::1')],
    ['::ffff:10.0.0.1 (IPv4-mapped private)', (d, n) => d.setAAAA(n, '::ffff:10.0.0.1')],
    ['a public and a private address at once', (d, n) => d.setA(n, PUBLIC_V4).setAAAA(n, 'fd00::2')],
  ];
  const hostName = (index: number) => `h${index}.hostile.test`;

  const createOk = async (body: object) => {
    const res = await admin.post('/sso/providers', body);
    expect(res.status).toBe(201);
    return res.body as { provider: Record<string, unknown> & { id: string }; warnings?: unknown[] };
  };

  beforeAll(async () => {
    dns = new TestDnsServer();
    await dns.start();
    hostile.forEach(([, set], index) => set(dns, hostName(index)));
    dns.setA('public.idp.test', PUBLIC_V4);
    idp = await startFakeIssuer();
    t = await startTestApp({ DNS_SERVERS: dns.address });
    ids = await t.seed(ssoFixture());
    admin = api(t, await t.token(ids.adminA, { mfa: true }));
  });
  beforeEach(() => idp.serveDefault());
  afterAll(async () => {
    await t.close();
    await idp.close();
    await dns.stop();
  });

  // Callers see one reason for every network refusal (issue 13, 14b: private_address and dns_failure
  // told an administrator which internal names exist); the precise reason is in the server log.
  describe.each(hostile.map(([label], index) => [label, index] as const))('an issuer host resolving to %s', (_label, index) => {
    const issuer = `https://${hostName(index)}`;

    it('is refused at create (provider kept without endpoints), at PATCH (nothing changed) and at test', async () => {
      const created = await createOk({ name: 'Hostile', type: 'oidc', issuer, clientId: 'c' });
      expect(created.warnings).toEqual([{ code: 'discovery_failed', reason: 'endpoint_unavailable', message: expect.any(String) }]);
      expect(created.provider).toMatchObject({ authorizationUrl: null, tokenUrl: null, userInfoUrl: null, jwksUrl: null });

      const good = (await createOk({ name: 'Good', type: 'oidc', issuer: idp.issuer, clientId: 'c' })).provider;
      const patched = await admin.patch(`/sso/providers/${good.id}`, { issuer }).expect(400);
      expect(patched.body).toMatchObject({ code: 'discovery_failed', reason: 'endpoint_unavailable' });
      const after = await admin.get(`/sso/providers/${good.id}`).expect(200);
      expect(after.body.provider).toMatchObject({ issuer: idp.issuer, tokenUrl: `${idp.issuer}/token`, generation: 1 });

      const tested = await admin.post(`/sso/providers/${created.provider.id}/test`).expect(200);
      expect(tested.body).toMatchObject({ reachable: false, error: { reason: 'endpoint_unavailable' } });
    });

    it('is refused as a manually entered endpoint', async () => {
      const res = await admin.post('/sso/providers', { name: 'Manual', type: 'oidc', tokenUrl: `https://${hostName(index)}/token` }).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_endpoint', field: 'tokenUrl', reason: 'endpoint_unavailable' });
    });
  });

  it('refuses plain-http issuers that are not loopback, and https to a loopback literal', async () => {
    const created = await createOk({ name: 'Plain http', type: 'oidc', issuer: 'http://public.idp.test' });
    expect(created.warnings).toEqual([expect.objectContaining({ reason: 'insecure_scheme' })]);
    const good = (await createOk({ name: 'Good', type: 'oidc', issuer: idp.issuer })).provider;
    for (const [issuer, reason] of [
      ['http://public.idp.test', 'insecure_scheme'],
      ['http://10.0.0.5', 'insecure_scheme'],
      [idp.issuer.replace('http:', 'https:'), 'endpoint_unavailable'],
    ]) {
      const res = await admin.patch(`/sso/providers/${good.id}`, { issuer }).expect(400);
      expect(res.body).toMatchObject({ code: 'discovery_failed', reason });
    }
  });

  it('refuses a discovery document that points an endpoint at a private or plain-http host', async () => {
    const good = (await createOk({ name: 'Good', type: 'oidc', issuer: idp.issuer })).provider;
    const otherIssuer = `${idp.issuer}/tenant-2`;
    idp.serveJson({ ...idp.documentFor(otherIssuer), token_endpoint: `https://${hostName(2)}/token` });
    const metadata = await admin.patch(`/sso/providers/${good.id}`, { issuer: otherIssuer }).expect(400);
    expect(metadata.body).toMatchObject({ code: 'discovery_failed', reason: 'endpoint_unavailable', endpoint: 'token_endpoint' });
    idp.serveJson({ ...idp.documentFor(otherIssuer), jwks_uri: 'http://public.idp.test/jwks' });
    const plain = await admin.patch(`/sso/providers/${good.id}`, { issuer: otherIssuer }).expect(400);
    expect(plain.body).toMatchObject({ code: 'discovery_failed', reason: 'insecure_scheme', endpoint: 'jwks_uri' });
    expect((await admin.get(`/sso/providers/${good.id}`).expect(200)).body.provider.issuer).toBe(idp.issuer);
  });

  it('fails cleanly on a document larger than the cap', async () => {
    idp.serveJson({ ...idp.documentFor(idp.issuer), padding: 'x'.repeat(600 * 1024) });
    const created = await createOk({ name: 'Huge', type: 'oidc', issuer: idp.issuer });
    expect(created.warnings).toEqual([{ code: 'discovery_failed', reason: 'too_large', message: expect.any(String) }]);
    expect(created.provider.authorizationUrl).toBeNull();
  });

  it('does not follow a redirect to another host', async () => {
    dns.setA('redirect-target.test', PUBLIC_V4);
    idp.respond((_req, res) => res.writeHead(302, { location: 'https://redirect-target.test/.well-known/openid-configuration' }).end());
    const created = await createOk({ name: 'Redirected', type: 'oidc', issuer: idp.issuer });
    expect(created.warnings).toEqual([expect.objectContaining({ reason: 'redirect' })]);
    expect(dns.queryCount('redirect-target.test')).toBe(0);
  });

  it('gives up on an IdP slower than the timeout, without a 500', async () => {
    const good = (await createOk({ name: 'Good', type: 'oidc', issuer: idp.issuer })).provider;
    idp.respond((_req, res) => {
      const late = setTimeout(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(idp.documentFor(`${idp.issuer}/slow`)));
      }, 7000);
      late.unref();
    });
    const started = Date.now();
    const res = await admin.patch(`/sso/providers/${good.id}`, { issuer: `${idp.issuer}/slow` }).expect(400);
    expect(res.body).toMatchObject({ code: 'discovery_failed', reason: 'endpoint_unavailable' });
    expect(Date.now() - started).toBeLessThan(6900);
  });

  it('re-validates persisted endpoints, refusing them once their host resolves to a private address', async () => {
    dns.setA('rebind.idp.test', PUBLIC_V4);
    const urls = {
      authorizationUrl: 'https://rebind.idp.test/authorize',
      tokenUrl: 'https://rebind.idp.test/token',
      userInfoUrl: 'https://rebind.idp.test/userinfo',
      jwksUrl: 'https://rebind.idp.test/jwks',
    };
    const { provider } = await createOk({ name: 'Manual', type: 'oidc', ...urls });
    expect(provider).toMatchObject(urls);
    const record = await t.app.get(SsoProviderLookupService).findById(provider.id);
    const discovery = t.app.get(ProviderDiscoveryService);
    await expect(discovery.assertSafeEndpoints(record!)).resolves.toBeUndefined();

    dns.setA('rebind.idp.test', '10.0.0.9');
    const failure = await discovery.assertSafeEndpoints(record!).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DiscoveryError);
    expect(failure).toMatchObject({ reason: 'private_address', endpoint: 'authorization_endpoint' });
    dns.setA('rebind.idp.test', PUBLIC_V4);
  });

  it('records a failed discovery on create in the audit event', async () => {
    const { provider } = await createOk({ name: 'Audited', type: 'oidc', issuer: `https://${hostName(1)}` });
    const [row] = await ownerQuery<{ details: Record<string, unknown> }>(
      `SELECT details FROM audit_logs WHERE resource_id = $1 AND action = 'sso.provider.create'`,
      [provider.id],
    );
    expect(row.details).toMatchObject({ discovery: 'failed', status: 'inactive', type: 'oidc' });
  });

  describe('without the development loopback setting', () => {
    let strict: TestApp;
    let strictAdmin: Api;

    beforeAll(async () => {
      strict = await startTestApp({ DNS_SERVERS: dns.address, SSO_ALLOW_INSECURE_LOOPBACK_IDP: 'false' });
      strictAdmin = api(strict, await strict.token(ids.adminA, { mfa: true }));
    });
    afterAll(() => strict.close());

    it('refuses a plain-http loopback issuer that the development setting would allow', async () => {
      const res = await strictAdmin.post('/sso/providers', { name: 'Local', type: 'oidc', issuer: idp.issuer }).expect(201);
      expect(res.body.warnings).toEqual([expect.objectContaining({ reason: 'insecure_scheme' })]);
      expect(res.body.provider.authorizationUrl).toBeNull();
    });

    it('refuses a plain-http loopback SAML SSO URL', async () => {
      const res = await strictAdmin.post('/sso/providers', { name: 'Local SAML', type: 'saml', ssoUrl: `${idp.issuer}/sso` }).expect(400);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'ssoUrl' })]);
    });
  });

  it('refuses to start in production with the loopback setting', () => {
    expect(() => loadConfig({ ...process.env, NODE_ENV: 'production', SSO_ALLOW_INSECURE_LOOPBACK_IDP: 'true' })).toThrow(/must not be set in production/);
  });
});
