import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { parseSamlXml, SAML_NS } from '../../../src/modules/sso/saml/xml/saml-xml.util';
import { tenantFixture } from '../../factories/tenant.factory';
import { buildLogoutRequestUrl, buildLogoutResponseUrl, createTestSamlIdp, generateSigningCredentials, parseLogoutRedirect, TestSamlIdp } from '../../support/idp/saml-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, exchange, exchangeCodeOf, verifyDomain } from '../sso-login/sso-login.kit';
import { insertSamlProvider, samlRoundTrip, spEntityIdOf } from '../sso-saml/saml.kit';

const IDP_SLO_URL = 'https://idp.test.example/saml/slo';

/**
 * SAML Single Logout over HTTP-Redirect with signed messages from the test IdP: SP-initiated (our
 * signed LogoutRequest, the IdP's signed LogoutResponse checked) and IdP-initiated (the IdP's signed
 * LogoutRequest ends the sessions of that NameID / SessionIndex, our signed LogoutResponse goes back);
 * unsigned, wrongly signed, wrong-issuer and otherwise malformed messages are refused.
 */
describe('SAML Single Logout', () => {
  let t: TestApp;
  let idp: TestSamlIdp;
  let ids: Record<string, string>;
  let f: ReturnType<typeof tenantFixture>;
  let email: string;
  let provider: string;
  let spSloUrl: string;

  const adminToken = () => t.token(ids.adminA, { mfa: true });
  const settingsPath = () => `/api/v1/sso/saml/providers/${provider}/sp-settings`;
  const me = (accessToken: string) => request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${accessToken}`);
  const refresh = (refreshToken: string) => request(t.http).post('/api/v1/auth/refresh').send({ refreshToken });
  /** Sends the browser to the service's SLO endpoint with what the IdP built. */
  const slo = (url: string) => {
    const u = new URL(url);
    return request(t.http).get(`${u.pathname}${u.search}`);
  };

  beforeAll(async () => {
    t = await startTestApp();
    idp = createTestSamlIdp();
    f = tenantFixture();
    ids = await t.seed(f);
    email = f.emails.adminA;
    await verifyDomain(ids.orgA, email.split('@')[1]);
    provider = await insertSamlProvider({ orgId: ids.orgA, idp });
    spSloUrl = `http://localhost:3000/api/v1/sso/saml/slo/${provider}`;
    const res = await request(t.http).put(settingsPath()).set('Authorization', `Bearer ${await adminToken()}`).send({ idpSloUrl: IDP_SLO_URL }).expect(200);
    expect(res.body).toMatchObject({ providerId: provider, idpSloUrl: IDP_SLO_URL, requireEncryptedAssertions: false, singleLogoutUrl: spSloUrl });
  });
  afterAll(async () => {
    await t.close();
  });

  async function signIn(sessionIndex: string) {
    const cb = await samlRoundTrip(t, `/api/v1/sso/saml/login/${ids.orgA}`, (req) => idp.buildResponseFor(req, { nameId: email, sessionIndex }));
    expect(cb.location).toMatch(/#ssoCode=/);
    return (await exchange(t, exchangeCodeOf(cb.location)!).expect(200)).body as { accessToken: string; refreshToken: string };
  }

  async function spCertificate(): Promise<string> {
    const res = await request(t.http).get(`/api/v1/sso/saml/metadata/${provider}`).expect(200);
    const doc = parseSamlXml(res.text);
    const descriptor = Array.from(doc.getElementsByTagNameNS(SAML_NS.metadata, 'KeyDescriptor')).find((k) => k.getAttribute('use') === 'signing')!;
    const body = descriptor.getElementsByTagNameNS(SAML_NS.dsig, 'X509Certificate')[0].textContent!;
    return `-----BEGIN CERTIFICATE-----\n${body.replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE-----\n`;
  }

  async function expectEnded(pair: { accessToken: string; refreshToken: string }) {
    await me(pair.accessToken).expect(401);
    await refresh(pair.refreshToken).expect(401);
  }

  async function expectRefused(url: string, reason: string) {
    const res = await slo(url).expect(302);
    expect(res.headers.location).toBe('/login?error=sso_error');
    const [audit] = await auditOf(provider, 'sso.logout.rejected');
    expect(audit.details).toEqual({ reason });
  }

  it('publishes the Single Logout service and the SP key, for signing and encryption, in the SP metadata', async () => {
    const res = await request(t.http).get(`/api/v1/sso/saml/metadata/${provider}`).expect(200);
    const doc = parseSamlXml(res.text);
    const slos = doc.getElementsByTagNameNS(SAML_NS.metadata, 'SingleLogoutService');
    expect(slos).toHaveLength(1);
    expect(slos[0].getAttribute('Binding')).toBe('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect');
    expect(slos[0].getAttribute('Location')).toBe(spSloUrl);
    const uses = Array.from(doc.getElementsByTagNameNS(SAML_NS.metadata, 'KeyDescriptor')).map((k) => k.getAttribute('use'));
    expect(uses).toEqual(['signing', 'encryption']);
    const settings = await request(t.http).get(settingsPath()).set('Authorization', `Bearer ${await adminToken()}`).expect(200);
    expect(settings.body.keys).toEqual([{ certificate: expect.stringContaining('BEGIN CERTIFICATE'), createdAt: expect.any(String), retiresAt: null }]);
    const [key] = await ownerQuery<{ private_key: string }>(`SELECT private_key FROM saml_sp_keys WHERE provider_id = $1`, [provider]);
    expect(key.private_key).toMatch(/^enc:v1:/);
  });

  it('records the NameID and SessionIndex of each SAML sign-in', async () => {
    const pair = await signIn('idx-recorded');
    const sid = JSON.parse(Buffer.from(pair.accessToken.split('.')[1], 'base64url').toString()).sid;
    const [link] = await ownerQuery(`SELECT protocol, subject, idp_session_id, name_id_format, id_token FROM sso_session_links WHERE session_id = $1`, [sid]);
    expect(link).toEqual({ protocol: 'saml', subject: email, idp_session_id: 'idx-recorded', name_id_format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', id_token: null });
  });

  describe('SP-initiated', () => {
    it('ends the session and sends the browser to the IdP with our signed LogoutRequest; the IdP’s signed LogoutResponse returns it to the path', async () => {
      const pair = await signIn('idx-sp-1');
      const res = await request(t.http).post('/api/v1/sso/logout').set('Authorization', `Bearer ${pair.accessToken}`).send({ redirect: '/devices' }).expect(200);
      const sent = parseLogoutRedirect(res.body.logoutUrl);
      expect(res.body.logoutUrl.startsWith(`${IDP_SLO_URL}?`)).toBe(true);
      expect(sent).toMatchObject({ kind: 'LogoutRequest', issuer: spEntityIdOf(provider), destination: IDP_SLO_URL, nameId: email, sessionIndex: 'idx-sp-1', relayState: '/devices' });
      expect(sent.sigAlg).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
      expect(sent.signedBy(await spCertificate())).toBe(true);
      expect(sent.signedBy(idp.certificatePem)).toBe(false);
      await expectEnded(pair);

      const answer = buildLogoutResponseUrl(idp, { spSloUrl, inResponseTo: sent.id, relayState: '/devices' });
      const back = await slo(answer).expect(302);
      expect(back.headers.location).toBe('/devices');
      // The request id was used up: the same answer again is refused.
      await expectRefused(answer, 'logout_in_response_to_invalid');
    });

    it('refuses a LogoutResponse that answers nothing we sent, or names no request', async () => {
      await expectRefused(buildLogoutResponseUrl(idp, { spSloUrl, inResponseTo: `_${randomBytes(20).toString('hex')}` }), 'logout_in_response_to_invalid');
      await expectRefused(buildLogoutResponseUrl(idp, { spSloUrl, inResponseTo: null }), 'logout_in_response_to_missing');
    });

    it('refuses a LogoutResponse whose status is not Success', async () => {
      const pair = await signIn('idx-sp-2');
      const res = await request(t.http).post('/api/v1/sso/logout').set('Authorization', `Bearer ${pair.accessToken}`).send({}).expect(200);
      const sent = parseLogoutRedirect(res.body.logoutUrl);
      await expectRefused(buildLogoutResponseUrl(idp, { spSloUrl, inResponseTo: sent.id, status: 'urn:oasis:names:tc:SAML:2.0:status:Responder' }), 'logout_status_not_success');
    });
  });

  describe('IdP-initiated', () => {
    it('ends the session of that SessionIndex only, and answers the IdP with our signed Success LogoutResponse', async () => {
      const a = await signIn('idx-idp-a');
      const b = await signIn('idx-idp-b');
      const logout = buildLogoutRequestUrl(idp, { spSloUrl, nameId: email, sessionIndex: 'idx-idp-a', id: '_req-idp-a', relayState: 'idp-state' });
      const res = await slo(logout).expect(302);
      const answer = parseLogoutRedirect(res.headers.location);
      expect(res.headers.location.startsWith(`${IDP_SLO_URL}?`)).toBe(true);
      expect(answer).toMatchObject({
        kind: 'LogoutResponse',
        inResponseTo: '_req-idp-a',
        issuer: spEntityIdOf(provider),
        destination: IDP_SLO_URL,
        statusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
        relayState: 'idp-state',
      });
      expect(answer.signedBy(await spCertificate())).toBe(true);
      await expectEnded(a);
      await me(b.accessToken).expect(200);
      const [audit] = await auditOf(provider, 'sso.logout.idp');
      expect(audit.details).toEqual({ by: 'session_index', sessionsEnded: 1 });
    });

    it('without a SessionIndex, ends every session of the NameID at this provider', async () => {
      const a = await signIn('idx-all-a');
      const b = await signIn('idx-all-b');
      await slo(buildLogoutRequestUrl(idp, { spSloUrl, nameId: email })).expect(302);
      await expectEnded(a);
      await expectEnded(b);
    });

    it('never ends a session another provider opened, even one of another tenant with the same IdP and NameID', async () => {
      const emailB = f.emails.adminB;
      await verifyDomain(ids.orgB, emailB.split('@')[1]).catch(() => undefined);
      await insertSamlProvider({ orgId: ids.orgB, idp });
      const cb = await samlRoundTrip(t, `/api/v1/sso/saml/login/${ids.orgB}`, (req) => idp.buildResponseFor(req, { nameId: emailB, sessionIndex: 'idx-tenant-b' }));
      const pairB = (await exchange(t, exchangeCodeOf(cb.location)!).expect(200)).body as { accessToken: string };
      await slo(buildLogoutRequestUrl(idp, { spSloUrl, nameId: emailB, sessionIndex: 'idx-tenant-b' })).expect(302);
      await slo(buildLogoutRequestUrl(idp, { spSloUrl, nameId: emailB })).expect(302);
      await me(pairB.accessToken).expect(200);
    });

    describe('refusals (nothing ends)', () => {
      let pair: { accessToken: string; refreshToken: string };
      beforeAll(async () => {
        pair = await signIn('idx-kept');
      });
      afterEach(async () => {
        await me(pair.accessToken).expect(200);
      });
      const named = (extra: Partial<Parameters<typeof buildLogoutRequestUrl>[1]> = {}) =>
        buildLogoutRequestUrl(idp, { spSloUrl, nameId: email, sessionIndex: 'idx-kept', ...extra });

      it('unsigned', async () => {
        await expectRefused(named({ sign: 'none' }), 'logout_unsigned');
      });

      it('signed by a key that is not the IdP’s', async () => {
        await expectRefused(named({ key: generateSigningCredentials('rogue') }), 'logout_signature_invalid');
      });

      it('from another issuer, even signed by the IdP’s key', async () => {
        await expectRefused(named({ issuer: 'https://other-idp.example/saml' }), 'logout_issuer_mismatch');
      });

      it('signed with RSA-SHA1', async () => {
        await expectRefused(named({ sign: 'sha1' }), 'logout_signature_algorithm_unsupported');
      });

      it('for another destination, or none', async () => {
        await expectRefused(named({ destination: 'https://sp.other.example/slo' }), 'logout_destination_mismatch');
        await expectRefused(named({ destination: null }), 'logout_destination_mismatch');
      });

      it('carrying an XML comment', async () => {
        await expectRefused(named({ comment: '<!---->' }), 'logout_xml_comment');
      });

      it('with the signature of another message', async () => {
        const other = new URL(buildLogoutRequestUrl(idp, { spSloUrl, nameId: 'someone-else@example.test' }));
        const forged = new URL(named());
        forged.searchParams.set('Signature', other.searchParams.get('Signature')!);
        await expectRefused(forged.toString(), 'logout_signature_invalid');
      });

      it('replayed: the same signed LogoutRequest works once', async () => {
        const other = await signIn('idx-replayed');
        const once = buildLogoutRequestUrl(idp, { spSloUrl, nameId: email, sessionIndex: 'idx-replayed' });
        await slo(once).expect(302);
        await expectEnded(other);
        await expectRefused(once, 'logout_request_replayed');
      });

      it('issued too long ago, or in the future', async () => {
        await expectRefused(named({ issueInstant: new Date(Date.now() - 7 * 60_000) }), 'logout_issue_instant_invalid');
        await expectRefused(named({ issueInstant: new Date(Date.now() + 3 * 60_000) }), 'logout_issue_instant_invalid');
      });

      it('with no message at all', async () => {
        await expectRefused(`${spSloUrl}?RelayState=x`, 'logout_message_missing');
      });
    });
  });

  it('refuses a Single Logout URL that is not https, and answers 404 for a provider the caller cannot see', async () => {
    const token = await adminToken();
    expect((await request(t.http).put(settingsPath()).set('Authorization', `Bearer ${token}`).send({ idpSloUrl: 'http://idp.example/slo' }).expect(400)).body.code).toBe('invalid_endpoint');
    const other = await insertSamlProvider({ orgId: ids.orgB, idp });
    await request(t.http).get(`/api/v1/sso/saml/providers/${other}/sp-settings`).set('Authorization', `Bearer ${token}`).expect(404);
    await request(t.http).put(`/api/v1/sso/saml/providers/${other}/sp-settings`).set('Authorization', `Bearer ${token}`).send({ requireEncryptedAssertions: true }).expect(404);
  });
});
