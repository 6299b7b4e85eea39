import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { PASSWORD, tenantFixture, uniq } from '../../factories/tenant.factory';
import { createTestSamlIdp, generateSigningCredentials, SigningCredentials, TestSamlIdp } from '../../support/idp/saml-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { verifyDomain } from '../sso-login/sso-login.kit';
import { lastRejection, samlRoundTrip } from './saml.kit';

const pemCount = (certificate: string | null) => (certificate ?? '').match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;

/** Provider creation and update from IdP metadata (docs/sso-saml.md), and key rotation at sign-in. */
describe('SAML providers from IdP metadata', () => {
  let t: TestApp;
  let idp: TestSamlIdp;
  let next: SigningCredentials;
  let f: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;
  let techToken: string;
  let server: Server;
  let metadataUrl: string;
  let served = '';

  beforeAll(async () => {
    t = await startTestApp();
    idp = createTestSamlIdp();
    next = generateSigningCredentials('next-key');
    f = tenantFixture();
    ids = await t.seed(f);
    techToken = await t.token(ids.tech, { mfa: true });
    server = createServer((req, res) => {
      if (req.url !== '/metadata') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(served);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    metadataUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`;
  });
  afterAll(async () => {
    await Promise.all([t.close(), new Promise((resolve) => server.close(resolve))]);
  });

  /** A fresh organization of the fixture's partner (so its technician administers it), with a member on a verified domain. */
  async function organizationWithMember(): Promise<{ orgId: string; email: string }> {
    const label = uniq('meta');
    const email = `member@${label}.example`;
    const seeded = await t.seed({
      partners: [{ key: 'p', name: f.partners![0].name }],
      organizations: [{ key: 'o', partner: 'p', name: `O ${label}` }],
      roles: [{ key: 'r', scope: 'organization', organization: 'o', name: 'Member', permissions: ['devices:read'] }],
      users: [{ key: 'u', email, name: 'Member', password: PASSWORD, memberships: [{ organization: 'o', role: 'r' }] }],
    });
    await verifyDomain(seeded.o, `${label}.example`);
    return { orgId: seeded.o, email };
  }

  const create = (body: Record<string, unknown>, token = techToken) =>
    request(t.http).post('/api/v1/sso/providers').set('Authorization', `Bearer ${token}`).send({ type: 'saml', name: `SAML ${uniq()}`, orgId: ids.orgA, ...body });
  const patch = (id: string, body: Record<string, unknown>) => request(t.http).patch(`/api/v1/sso/providers/${id}`).set('Authorization', `Bearer ${techToken}`).send(body);
  const activate = (id: string) => request(t.http).post(`/api/v1/sso/providers/${id}/status`).set('Authorization', `Bearer ${techToken}`).send({ status: 'active' }).expect(200);

  it('fills entity id, SSO URL and every signing certificate from a metadata document, and accepts either key at sign-in', async () => {
    const { orgId, email } = await organizationWithMember();
    const res = await create({ orgId, idpMetadataXml: idp.metadataXml({ additionalCertificates: [next.certificatePem] }) }).expect(201);
    expect(res.body.provider).toMatchObject({ entityId: idp.entityId, ssoUrl: idp.ssoUrl, type: 'saml', status: 'inactive' });
    expect(pemCount(res.body.provider.certificate)).toBe(2);
    expect(res.body.provider).not.toHaveProperty('idpMetadataXml');
    const id = res.body.provider.id as string;
    await activate(id);

    const login = `/api/v1/sso/saml/login/${orgId}`;
    const current = await samlRoundTrip(t, login, (req) => idp.buildResponseFor(req, { nameId: email }));
    expect(current.location).toMatch(/#ssoCode=/);
    const rotated = await samlRoundTrip(t, login, (req) => idp.buildResponseFor(req, { nameId: email, key: next }));
    expect(rotated.location).toMatch(/#ssoCode=/);
    const unknown = await samlRoundTrip(t, login, (req) => idp.buildResponseFor(req, { nameId: email, key: generateSigningCredentials('unlisted') }));
    expect(unknown.location).toBe('/login?error=sso_error');
    expect(await lastRejection(id)).toEqual({ code: 'sso_error', reason: 'signature_invalid' });
  });

  it('fetches metadata from a URL, and a later import replaces the keys (the old one then stops working)', async () => {
    const { orgId, email } = await organizationWithMember();
    served = idp.metadataXml({ additionalCertificates: [next.certificatePem] });
    const res = await create({ orgId, idpMetadataUrl: metadataUrl }).expect(201);
    expect(res.body.provider).toMatchObject({ entityId: idp.entityId, ssoUrl: idp.ssoUrl });
    expect(pemCount(res.body.provider.certificate)).toBe(2);
    const id = res.body.provider.id as string;
    await activate(id);

    // The IdP finished its rotation: its metadata now lists only the new key.
    const rotatedIdp = new TestSamlIdp(idp.entityId, idp.ssoUrl, next);
    served = rotatedIdp.metadataXml();
    const updated = await patch(id, { idpMetadataUrl: metadataUrl }).expect(200);
    expect(pemCount(updated.body.provider.certificate)).toBe(1);
    expect(updated.body.provider.certificate.replace(/\s+/g, '')).toBe(next.certificatePem.replace(/\s+/g, ''));
    expect(updated.body.provider.generation).toBeGreaterThan(res.body.provider.generation);
    const [audit] = await ownerQuery<{ details: { changed: string[] } }>(
      `SELECT details FROM audit_logs WHERE resource_id = $1 AND action = 'sso.provider.update' ORDER BY created_at DESC LIMIT 1`,
      [id],
    );
    expect(audit.details.changed).toEqual(['certificate']);

    const login = `/api/v1/sso/saml/login/${orgId}`;
    expect((await samlRoundTrip(t, login, (req) => rotatedIdp.buildResponseFor(req, { nameId: email }))).location).toMatch(/#ssoCode=/);
    expect((await samlRoundTrip(t, login, (req) => idp.buildResponseFor(req, { nameId: email }))).location).toBe('/login?error=sso_error');
  });

  it('lets fields given explicitly win over the metadata', async () => {
    const res = await create({ idpMetadataXml: idp.metadataXml(), entityId: 'urn:explicit:idp' }).expect(201);
    expect(res.body.provider).toMatchObject({ entityId: 'urn:explicit:idp', ssoUrl: idp.ssoUrl });
    expect(pemCount(res.body.provider.certificate)).toBe(1);
  });

  it('refuses metadata URLs that the discovery rules refuse, before storing anything', async () => {
    const before = await ownerQuery(`SELECT count(*)::int AS n FROM sso_providers WHERE org_id = $1`, [ids.orgA]);
    const privateAddress = await create({ idpMetadataUrl: 'https://10.0.0.7/metadata' }).expect(400);
    expect(privateAddress.body).toMatchObject({ code: 'saml_metadata_invalid', reason: 'endpoint_unavailable' });
    const plainHttp = await create({ idpMetadataUrl: 'http://idp.example.com/metadata' }).expect(400);
    expect(plainHttp.body).toMatchObject({ code: 'saml_metadata_invalid', reason: 'insecure_scheme' });
    const missing = await create({ idpMetadataUrl: metadataUrl.replace('/metadata', '/missing') }).expect(400);
    expect(missing.body).toMatchObject({ code: 'saml_metadata_invalid', reason: 'http_status' });
    expect(await ownerQuery(`SELECT count(*)::int AS n FROM sso_providers WHERE org_id = $1`, [ids.orgA])).toEqual(before);
  });

  it('refuses metadata documents that are not safe or not IdP metadata, naming the reason', async () => {
    const doctype = await create({ idpMetadataXml: `<!DOCTYPE x [<!ENTITY e "e">]>${idp.metadataXml().replace(/^<\?xml[^>]*>\s*/, '')}` }).expect(400);
    expect(doctype.body).toMatchObject({ code: 'saml_metadata_invalid', reason: 'doctype_forbidden' });
    const notIdp = await create({ idpMetadataXml: '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>' }).expect(400);
    expect(notIdp.body).toMatchObject({ code: 'saml_metadata_invalid', reason: 'not_idp_metadata' });
    const plainHttpSso = await create({ idpMetadataXml: new TestSamlIdp(idp.entityId, 'http://idp.example.com/sso', next).metadataXml() }).expect(400);
    expect(plainHttpSso.body).toMatchObject({ code: 'saml_metadata_invalid', reason: 'sso_url_unacceptable' });
  });

  it('rejects metadata fields on an OIDC provider and both sources at once', async () => {
    const oidc = await create({ type: 'oidc', idpMetadataXml: idp.metadataXml() }).expect(400);
    expect(oidc.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'idpMetadataXml', message: expect.stringContaining('SAML') }] });
    const both = await create({ idpMetadataXml: idp.metadataXml(), idpMetadataUrl: metadataUrl }).expect(400);
    expect(both.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'idpMetadataUrl' }] });
  });

  it('keeps the administration rules: importing needs MFA', async () => {
    const noMfa = await t.token(ids.tech, { mfa: false });
    const res = await create({ idpMetadataXml: idp.metadataXml() }, noMfa).expect(403);
    expect(res.body.code).toBe('mfa_required');
  });
});
