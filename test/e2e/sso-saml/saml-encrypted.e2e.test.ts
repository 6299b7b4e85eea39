import request from 'supertest';
import { parseSamlXml, SAML_NS } from '../../../src/modules/sso/saml/xml/saml-xml.util';
import { tenantFixture } from '../../factories/tenant.factory';
import { BuildResponseOptions, createTestSamlIdp, encryptAssertion, generateSigningCredentials, TestSamlIdp } from '../../support/idp/saml-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { exchange, exchangeCodeOf, verifyDomain } from '../sso-login/sso-login.kit';
import { insertSamlProvider, lastRejection, postAcs, startSamlLogin } from './saml.kit';

/**
 * Encrypted assertions (node-saml decryption with the SP key): the SP certificate published in the
 * metadata encrypts, a provider flag makes encryption mandatory, and after a key rotation the
 * previous key still decrypts while it is published (its overlap window), and not after.
 */
describe('SAML encrypted assertions', () => {
  let t: TestApp;
  let idp: TestSamlIdp;
  let ids: Record<string, string>;
  let email: string;

  beforeAll(async () => {
    t = await startTestApp();
    idp = createTestSamlIdp();
    const f = tenantFixture();
    ids = await t.seed(f);
    email = f.emails.adminA;
    await verifyDomain(ids.orgA, email.split('@')[1]);
  });
  afterAll(async () => {
    await t.close();
  });

  const admin = async () => `Bearer ${await t.token(ids.adminA, { mfa: true })}`;

  /** The SP certificates the metadata publishes for one use, newest first. */
  async function published(provider: string, use: 'signing' | 'encryption'): Promise<string[]> {
    const res = await request(t.http).get(`/api/v1/sso/saml/metadata/${provider}`).expect(200);
    return Array.from(parseSamlXml(res.text).getElementsByTagNameNS(SAML_NS.metadata, 'KeyDescriptor'))
      .filter((k) => k.getAttribute('use') === use)
      .map((k) => {
        const body = k.getElementsByTagNameNS(SAML_NS.dsig, 'X509Certificate')[0].textContent!;
        return `-----BEGIN CERTIFICATE-----\n${body.replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE-----\n`;
      });
  }

  /** A whole sign-in whose response the IdP builds with `options` and, when `encryptFor` is given, encrypts for that certificate. */
  async function signIn(provider: string, encryptFor: string | null, options: Partial<BuildResponseOptions> = {}) {
    void provider;
    const started = await startSamlLogin(t, `/api/v1/sso/saml/login/${ids.orgA}`);
    expect(started.status).toBe(302);
    const plain = idp.buildResponseFor(started.request!, { nameId: email, ...options });
    const response = encryptFor ? await encryptAssertion(plain, encryptFor) : plain;
    return postAcs(t, { SAMLResponse: response, RelayState: started.request!.relayState }, started.cookie);
  }

  async function freshProvider(): Promise<string> {
    // The login route uses the organization's oldest active provider: only the newest one stays active.
    await ownerQuery(`UPDATE sso_providers SET status = 'inactive' WHERE org_id = $1`, [ids.orgA]);
    return insertSamlProvider({ orgId: ids.orgA, idp });
  }

  it('signs in with an assertion encrypted for the SP certificate of the metadata (signed inside the encryption)', async () => {
    const provider = await freshProvider();
    const [current] = await published(provider, 'encryption');
    const cb = await signIn(provider, current);
    expect(cb.location).toMatch(/#ssoCode=/);
    const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
    expect((await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${pair.body.accessToken}`).expect(200)).body.user.email).toBe(email);
  });

  it('refuses an assertion encrypted for a key that is not ours, and an encrypted assertion nobody signed', async () => {
    const provider = await freshProvider();
    const stranger = generateSigningCredentials('stranger').certificatePem;
    expect((await signIn(provider, stranger)).location).toBe('/login?error=sso_error');
    expect(await lastRejection(provider)).toEqual({ code: 'sso_error', reason: 'assertion_decryption_failed' });

    const [current] = await published(provider, 'encryption');
    expect((await signIn(provider, current, { sign: 'none' })).location).toBe('/login?error=sso_error');
    expect(await lastRejection(provider)).toEqual({ code: 'sso_error', reason: 'signature_invalid' });
  });

  it('accepts a plain signed assertion by default, and refuses it once the provider requires encryption', async () => {
    const provider = await freshProvider();
    expect((await signIn(provider, null)).location).toMatch(/#ssoCode=/);
    const res = await request(t.http).put(`/api/v1/sso/saml/providers/${provider}/sp-settings`).set('Authorization', await admin()).send({ requireEncryptedAssertions: true }).expect(200);
    expect(res.body.requireEncryptedAssertions).toBe(true);

    expect((await signIn(provider, null)).location).toBe('/login?error=sso_error');
    expect(await lastRejection(provider)).toEqual({ code: 'sso_error', reason: 'assertion_not_encrypted' });
    const [current] = await published(provider, 'encryption');
    expect((await signIn(provider, current)).location).toMatch(/#ssoCode=/);
  });

  it('after a rotation, publishes both keys for encryption (the new one alone for signing) and decrypts with either until the overlap ends', async () => {
    const provider = await freshProvider();
    const [before] = await published(provider, 'encryption');
    const rotated = await request(t.http).post(`/api/v1/sso/saml/providers/${provider}/sp-keys/rotate`).set('Authorization', await admin()).expect(200);
    expect(rotated.body.keys).toEqual([
      { certificate: expect.any(String), createdAt: expect.any(String), retiresAt: null },
      { certificate: before, createdAt: expect.any(String), retiresAt: expect.any(String) },
    ]);
    const retiresIn = new Date(rotated.body.keys[1].retiresAt).getTime() - Date.now();
    expect(retiresIn).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(retiresIn).toBeLessThanOrEqual(7 * 86_400_000);

    const encryption = await published(provider, 'encryption');
    expect(encryption).toHaveLength(2);
    expect(encryption[1]).toBe(before);
    expect(await published(provider, 'signing')).toEqual([encryption[0]]);

    expect((await signIn(provider, before)).location).toMatch(/#ssoCode=/);
    expect((await signIn(provider, encryption[0])).location).toMatch(/#ssoCode=/);

    // The overlap window ends: the previous key is neither published nor accepted.
    await ownerQuery(`UPDATE saml_sp_keys SET created_at = now() - interval '8 days', retires_at = now() - interval '1 second' WHERE provider_id = $1 AND retires_at IS NOT NULL`, [provider]);
    expect(await published(provider, 'encryption')).toEqual([encryption[0]]);
    expect((await signIn(provider, before)).location).toBe('/login?error=sso_error');
    expect(await lastRejection(provider)).toEqual({ code: 'sso_error', reason: 'assertion_decryption_failed' });
  });
});
