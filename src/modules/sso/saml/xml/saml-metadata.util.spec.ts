import { generateSigningCredentials, type SigningCredentials } from '../../../../../test/support/idp/saml-idp';
import { buildSpMetadata, parseIdpMetadata } from './saml-metadata.util';
import { SamlXmlError } from './saml-xml.errors';
import { NAMEID_FORMAT_EMAIL, SAML_BINDING, SAML_NS, firstChildElement, parseSamlXml, pemToCertificateBody } from './saml-xml.util';

const ACS_URL = 'https://rmm.example/api/v1/sso/saml/acs';

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (err instanceof SamlXmlError) {
      return err.code;
    }
    throw err;
  }
  throw new Error('expected a SamlXmlError');
}

function keyDescriptor(pem: string, use?: string): string {
  return `<md:KeyDescriptor${use ? ` use="${use}"` : ''}><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${pemToCertificateBody(pem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
}

function idpMetadata({
  entityId = 'https://idp.example/metadata',
  keys = '',
  services = `<md:SingleSignOnService Binding="${SAML_BINDING.httpPost}" Location="https://idp.example/sso/post"/><md:SingleSignOnService Binding="${SAML_BINDING.httpRedirect}" Location="https://idp.example/sso/redirect"/>`,
}: { entityId?: string | null; keys?: string; services?: string } = {}): string {
  const entityAttr = entityId === null ? '' : ` entityID="${entityId}"`;
  return `<md:EntityDescriptor xmlns:md="${SAML_NS.metadata}" xmlns:ds="${SAML_NS.dsig}"${entityAttr}><md:IDPSSODescriptor protocolSupportEnumeration="${SAML_NS.protocol}">${keys}${services}</md:IDPSSODescriptor></md:EntityDescriptor>`;
}

describe('buildSpMetadata', () => {
  it('produces SP metadata that reads back with the entity id, the HTTP-POST ACS and the signing expectations', () => {
    const xml = buildSpMetadata({ entityId: 'https://rmm.example/saml/sp', acsUrl: ACS_URL });

    const root = parseSamlXml(xml).documentElement!;
    expect(root.localName).toBe('EntityDescriptor');
    expect(root.namespaceURI).toBe(SAML_NS.metadata);
    expect(root.getAttribute('entityID')).toBe('https://rmm.example/saml/sp');
    const sp = firstChildElement(root, SAML_NS.metadata, 'SPSSODescriptor')!;
    expect(sp.getAttribute('WantAssertionsSigned')).toBe('true');
    expect(sp.getAttribute('AuthnRequestsSigned')).toBe('false');
    expect(sp.getAttribute('protocolSupportEnumeration')).toBe(SAML_NS.protocol);
    expect(firstChildElement(sp, SAML_NS.metadata, 'NameIDFormat')!.textContent).toBe(NAMEID_FORMAT_EMAIL);
    const acs = firstChildElement(sp, SAML_NS.metadata, 'AssertionConsumerService')!;
    expect(acs.getAttribute('Binding')).toBe(SAML_BINDING.httpPost);
    expect(acs.getAttribute('Location')).toBe(ACS_URL);
  });

  it('starts with an XML declaration', () => {
    expect(buildSpMetadata({ entityId: 'sp', acsUrl: ACS_URL }).startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
  });

  it('honours a configured NameID format and signing flags', () => {
    const xml = buildSpMetadata({
      entityId: 'sp',
      acsUrl: ACS_URL,
      nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
      wantAssertionsSigned: false,
      authnRequestsSigned: true,
    });

    const sp = firstChildElement(parseSamlXml(xml).documentElement!, SAML_NS.metadata, 'SPSSODescriptor')!;
    expect(firstChildElement(sp, SAML_NS.metadata, 'NameIDFormat')!.textContent).toBe(
      'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
    );
    expect(sp.getAttribute('WantAssertionsSigned')).toBe('false');
    expect(sp.getAttribute('AuthnRequestsSigned')).toBe('true');
  });

  it('escapes <, & and " in every value so they cannot break out of attributes or text', () => {
    const entityId = 'urn:sp:"><evil attr="1"/>&amp;';
    const acsUrl = 'https://rmm.example/acs?a=1&b="<x>"';
    const nameIdFormat = 'urn:format:</md:NameIDFormat><injected/>&';

    const xml = buildSpMetadata({ entityId, acsUrl, nameIdFormat });

    expect(xml).not.toContain('<evil');
    expect(xml).not.toContain('<injected');
    expect(xml).toContain('&lt;');
    expect(xml).toContain('&amp;amp;');
    expect(xml).toContain('&quot;');
    const root = parseSamlXml(xml).documentElement!;
    expect(root.getAttribute('entityID')).toBe(entityId);
    const sp = firstChildElement(root, SAML_NS.metadata, 'SPSSODescriptor')!;
    expect(firstChildElement(sp, SAML_NS.metadata, 'AssertionConsumerService')!.getAttribute('Location')).toBe(acsUrl);
    expect(firstChildElement(sp, SAML_NS.metadata, 'NameIDFormat')!.textContent).toBe(nameIdFormat);
  });

  it('refuses a value containing characters XML cannot carry', () => {
    expect(codeOf(() => buildSpMetadata({ entityId: 'sp\u0000', acsUrl: ACS_URL }))).toBe('invalid_input');
  });

  it('refuses an empty entity id and an ACS URL that is not an absolute http(s) URL', () => {
    expect(codeOf(() => buildSpMetadata({ entityId: '', acsUrl: ACS_URL }))).toBe('invalid_input');
    expect(codeOf(() => buildSpMetadata({ entityId: 'sp', acsUrl: '/api/v1/sso/saml/acs' }))).toBe('invalid_input');
    expect(codeOf(() => buildSpMetadata({ entityId: 'sp', acsUrl: 'javascript:alert(1)' }))).toBe('invalid_input');
  });
});

describe('parseIdpMetadata', () => {
  let current: SigningCredentials;
  let next: SigningCredentials;
  let encryption: SigningCredentials;

  beforeAll(() => {
    current = generateSigningCredentials('current');
    next = generateSigningCredentials('next');
    encryption = generateSigningCredentials('encryption');
  });

  it('reads the entity id, the HTTP-Redirect SSO location and the signing certificate', () => {
    const parsed = parseIdpMetadata(idpMetadata({ keys: keyDescriptor(current.certificatePem, 'signing') }));

    expect(parsed).toEqual({
      entityId: 'https://idp.example/metadata',
      ssoUrl: 'https://idp.example/sso/redirect',
      certificates: [current.certificatePem],
    });
  });

  it('returns every signing certificate, including those without a use, and skips encryption keys', () => {
    const keys =
      keyDescriptor(current.certificatePem, 'signing') +
      keyDescriptor(encryption.certificatePem, 'encryption') +
      keyDescriptor(next.certificatePem);

    expect(parseIdpMetadata(idpMetadata({ keys })).certificates).toEqual([current.certificatePem, next.certificatePem]);
  });

  it('lists a certificate published twice only once', () => {
    const keys = keyDescriptor(current.certificatePem, 'signing') + keyDescriptor(current.certificatePem);

    expect(parseIdpMetadata(idpMetadata({ keys })).certificates).toHaveLength(1);
  });

  it('accepts an EntitiesDescriptor that holds exactly one IdP', () => {
    const entity = idpMetadata({ keys: keyDescriptor(current.certificatePem) });
    const aggregate = `<md:EntitiesDescriptor xmlns:md="${SAML_NS.metadata}">${entity}<md:EntityDescriptor entityID="https://sp.other/"><md:SPSSODescriptor protocolSupportEnumeration="${SAML_NS.protocol}"/></md:EntityDescriptor></md:EntitiesDescriptor>`;

    expect(parseIdpMetadata(aggregate).entityId).toBe('https://idp.example/metadata');
  });

  it('refuses an aggregate describing several IdPs, since it cannot tell which one is meant', () => {
    const entity = idpMetadata({ keys: keyDescriptor(current.certificatePem) });
    const aggregate = `<md:EntitiesDescriptor xmlns:md="${SAML_NS.metadata}">${entity}${entity}</md:EntitiesDescriptor>`;

    expect(codeOf(() => parseIdpMetadata(aggregate))).toBe('not_idp_metadata');
  });

  it('rejects a DOCTYPE declaring an external entity (XXE)', () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE md:EntityDescriptor [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${idpMetadata({ entityId: '&xxe;' })}`;

    expect(codeOf(() => parseIdpMetadata(xxe))).toBe('doctype_forbidden');
  });

  it('rejects a DOCTYPE used for entity expansion, whatever its case', () => {
    const laughs = `<!doctype lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><lolz>&lol2;</lolz>`;

    expect(codeOf(() => parseIdpMetadata(laughs))).toBe('doctype_forbidden');
  });

  it('rejects XML that is not well-formed', () => {
    expect(codeOf(() => parseIdpMetadata('<md:EntityDescriptor xmlns:md="x"><oops></md:EntityDescriptor>'))).toBe('malformed_xml');
    expect(codeOf(() => parseIdpMetadata('not xml at all'))).toBe('malformed_xml');
    expect(codeOf(() => parseIdpMetadata(''))).toBe('malformed_xml');
  });

  it('rejects a document that is not SAML metadata', () => {
    expect(codeOf(() => parseIdpMetadata('<html><body/></html>'))).toBe('not_idp_metadata');
  });

  it('rejects metadata without an IDPSSODescriptor', () => {
    const spOnly = `<md:EntityDescriptor xmlns:md="${SAML_NS.metadata}" entityID="sp"><md:SPSSODescriptor protocolSupportEnumeration="${SAML_NS.protocol}"/></md:EntityDescriptor>`;

    expect(codeOf(() => parseIdpMetadata(spOnly))).toBe('not_idp_metadata');
  });

  it('names each missing part', () => {
    const keys = keyDescriptor(current.certificatePem);

    expect(codeOf(() => parseIdpMetadata(idpMetadata({ entityId: null, keys })))).toBe('missing_entity_id');
    expect(
      codeOf(() =>
        parseIdpMetadata(
          idpMetadata({ keys, services: `<md:SingleSignOnService Binding="${SAML_BINDING.httpPost}" Location="https://idp.example/sso"/>` }),
        ),
      ),
    ).toBe('missing_sso_url');
    expect(codeOf(() => parseIdpMetadata(idpMetadata({ keys: keyDescriptor(encryption.certificatePem, 'encryption') })))).toBe(
      'missing_signing_certificate',
    );
  });

  it('rejects an SSO location that is not an absolute http(s) URL', () => {
    const services = `<md:SingleSignOnService Binding="${SAML_BINDING.httpRedirect}" Location="/relative"/>`;

    expect(codeOf(() => parseIdpMetadata(idpMetadata({ keys: keyDescriptor(current.certificatePem), services })))).toBe(
      'missing_sso_url',
    );
  });

  it('rejects a certificate that is not a parseable X.509 certificate', () => {
    const garbled = `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>bm90IGEgY2VydGlmaWNhdGU=</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
    const notBase64 = `<md:KeyDescriptor><ds:KeyInfo><ds:X509Data><ds:X509Certificate>%%%</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;

    expect(codeOf(() => parseIdpMetadata(idpMetadata({ keys: garbled })))).toBe('invalid_certificate');
    expect(codeOf(() => parseIdpMetadata(idpMetadata({ keys: notBase64 })))).toBe('invalid_certificate');
  });
});
