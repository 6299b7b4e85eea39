import { samlStateCookieOptions } from './saml-cookie.util';
import { samlSettings, splitCertificates } from './saml-provider.util';
import { NAMEID_FORMAT_EMAIL } from './xml/saml-xml.util';

const CERT_A = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----';
const CERT_B = '-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----';

describe('samlSettings', () => {
  const columns = { entity_id: 'https://idp.example', sso_url: 'https://idp.example/sso', certificate: `${CERT_A}\n${CERT_B}`, name_id_format: null, force_authn: true };

  it('keeps every stored certificate, so a rotating IdP may sign with either key', () => {
    expect(samlSettings(columns)).toEqual({
      settings: { entityId: 'https://idp.example', ssoUrl: 'https://idp.example/sso', certificates: [CERT_A, CERT_B], nameIdFormat: NAMEID_FORMAT_EMAIL, forceAuthn: true },
    });
  });

  it('names the fields a provider lacks to sign anyone in', () => {
    expect(samlSettings({ ...columns, entity_id: null, certificate: 'not a certificate' })).toEqual({ missing: ['entityId', 'certificate'] });
    expect(samlSettings({ ...columns, sso_url: '' })).toEqual({ missing: ['ssoUrl'] });
  });

  it('uses the configured NameID format when there is one', () => {
    const persistent = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
    expect(samlSettings({ ...columns, name_id_format: persistent })).toMatchObject({ settings: { nameIdFormat: persistent } });
  });
});

describe('splitCertificates', () => {
  it('finds nothing in an empty column', () => {
    expect(splitCertificates(null)).toEqual([]);
  });
});

describe('samlStateCookieOptions', () => {
  it('is SameSite=None with Secure, since the IdP returns the browser with a cross-site POST', () => {
    expect(samlStateCookieOptions(true)).toEqual({ httpOnly: true, secure: true, sameSite: 'none', path: '/api/v1/sso/saml/acs', maxAge: 600_000 });
  });

  it('stays SameSite=Lax without Secure, which browsers require for SameSite=None', () => {
    expect(samlStateCookieOptions(false)).toMatchObject({ secure: false, sameSite: 'lax', path: '/api/v1/sso/saml/acs' });
  });
});
