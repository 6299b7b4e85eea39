/**
 * Self-test of the test SAML IdP (test/support/idp/saml-idp.ts): what it signs is accepted by
 * node-saml configured like the service, and each forged variant it builds is still a faithful
 * attack (the genuine signature survives) that node-saml turns down.
 */
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import {
  DEFAULT_EVIL_NAME_ID,
  XSW_VARIANTS,
  applyXsw,
  createTestSamlIdp,
  decodeSamlResponse,
  generateSigningCredentials,
  injectNameIdComment,
  parseAuthnRequest,
  type BuildResponseOptions,
  type TestSamlIdp,
} from '../../../../../test/support/idp/saml-idp';
import { parseIdpMetadata } from './saml-metadata.util';

const SP_ENTITY_ID = 'https://rmm.example/saml/sp';
const ACS_URL = 'https://rmm.example/api/v1/sso/saml/acs';
const LEGIT = 'ann@customer-a.example';

function serviceProvider(idp: TestSamlIdp, overrides: Partial<ConstructorParameters<typeof SAML>[0]> = {}): SAML {
  return new SAML({
    entryPoint: idp.ssoUrl,
    issuer: SP_ENTITY_ID,
    callbackUrl: ACS_URL,
    idpCert: idp.certificatePem,
    audience: SP_ENTITY_ID,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    ...overrides,
  });
}

describe('test SAML IdP', () => {
  let idp: TestSamlIdp;
  let sp: SAML;
  const base: BuildResponseOptions = { spEntityId: SP_ENTITY_ID, acsUrl: ACS_URL, nameId: LEGIT };

  beforeAll(() => {
    idp = createTestSamlIdp();
    sp = serviceProvider(idp);
  });

  describe('genuine responses', () => {
    it('signs an assertion that node-saml accepts, with NameID, SessionIndex and attributes', async () => {
      const SAMLResponse = idp.buildResponse({
        ...base,
        sessionIndex: '_session-1',
        attributes: {
          'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress': LEGIT,
          'urn:oid:2.5.4.42': 'Ann',
          'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups': ['admins', 'techs'],
        },
      });

      const { profile } = await sp.validatePostResponseAsync({ SAMLResponse });

      expect(profile?.nameID).toBe(LEGIT);
      expect(profile?.issuer).toBe(idp.entityId);
      expect(profile?.sessionIndex).toBe('_session-1');
      expect(profile?.attributes).toEqual({
        'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress': LEGIT,
        'urn:oid:2.5.4.42': 'Ann',
        'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups': ['admins', 'techs'],
      });
    });

    it('signs both the response and the assertion when asked, and node-saml accepts it even when it demands both', async () => {
      const strict = serviceProvider(idp, { wantAuthnResponseSigned: true });

      const { profile } = await strict.validatePostResponseAsync({ SAMLResponse: idp.buildResponse({ ...base, sign: 'both' }) });

      expect(profile?.nameID).toBe(LEGIT);
    });

    it('puts InResponseTo, Destination and Recipient where the SP must check them', () => {
      const xml = decodeSamlResponse(idp.buildResponse({ ...base, inResponseTo: '_req-42' }));

      expect(xml).toMatch(/<samlp:Response [^>]*InResponseTo="_req-42"/);
      expect(xml).toMatch(/<samlp:Response [^>]*Destination="https:\/\/rmm\.example\/api\/v1\/sso\/saml\/acs"/);
      expect(xml).toMatch(/<saml:SubjectConfirmationData [^>]*InResponseTo="_req-42"[^>]*Recipient="https:\/\/rmm\.example\/api\/v1\/sso\/saml\/acs"/);
    });

    it('omits an element or attribute given as null', () => {
      const xml = decodeSamlResponse(idp.buildResponse({ ...base, destination: null, audience: null, sessionIndex: null }));

      expect(xml).not.toContain('Destination=');
      expect(xml).not.toContain('<saml:Audience>');
      expect(xml).not.toContain('SessionIndex=');
    });

    it('builds responses that node-saml refuses for the wrong audience or past expiry', async () => {
      await expect(
        sp.validatePostResponseAsync({ SAMLResponse: idp.buildResponse({ ...base, audience: 'https://other-sp.example' }) }),
      ).rejects.toThrow(/audience/i);
      await expect(
        sp.validatePostResponseAsync({ SAMLResponse: idp.buildResponse({ ...base, notOnOrAfter: new Date(Date.now() - 60_000) }) }),
      ).rejects.toThrow(/expired|NotOnOrAfter/i);
    });
  });

  describe('unsigned and wrongly signed responses', () => {
    it('produces an unsigned assertion in a signed response, which node-saml rejects when assertions must be signed', async () => {
      await expect(sp.validatePostResponseAsync({ SAMLResponse: idp.buildResponse({ ...base, sign: 'response' }) })).rejects.toThrow(
        /signature/i,
      );
    });

    it('produces a completely unsigned response, which node-saml rejects', async () => {
      const SAMLResponse = idp.buildResponse({ ...base, sign: 'none' });

      expect(decodeSamlResponse(SAMLResponse)).not.toContain('Signature');
      await expect(sp.validatePostResponseAsync({ SAMLResponse })).rejects.toThrow(/signature/i);
    });

    it('produces a response signed by an unknown key, which node-saml rejects', async () => {
      const SAMLResponse = idp.buildResponse({ ...base, key: generateSigningCredentials('intruder') });

      await expect(sp.validatePostResponseAsync({ SAMLResponse })).rejects.toThrow(/signature/i);
    });

    it('produces a genuine signature that covers an Extensions element instead of the assertion, which node-saml rejects', async () => {
      const SAMLResponse = idp.signatureNotCoveringAssertion(idp.buildResponse({ ...base, sign: 'both' }));
      const xml = decodeSamlResponse(SAMLResponse);

      expect(xml.match(/<ds:Signature /g)).toHaveLength(1);
      expect(xml).toMatch(/<ds:Reference URI="#(_[0-9a-f]+)".*<samlp:Extensions ID="\1"\/>/);
      expect(xml).toContain(`>${DEFAULT_EVIL_NAME_ID}</saml:NameID>`);
      await expect(sp.validatePostResponseAsync({ SAMLResponse })).rejects.toThrow(/signature/i);
    });
  });

  describe('signature wrapping (XSW1–XSW8)', () => {
    it.each(XSW_VARIANTS)('XSW%i keeps the genuine signed content beside an evil copy, and node-saml rejects it', async (variant) => {
      const signed = idp.buildResponse({ ...base, sign: 'both' });
      const originalSignatureValues = decodeSamlResponse(signed).match(/<ds:SignatureValue>[^<]+/g)!;

      const SAMLResponse = applyXsw(variant, signed);
      const xml = decodeSamlResponse(SAMLResponse);

      expect(xml).toContain(`>${LEGIT}</saml:NameID>`);
      expect(xml).toContain(`>${DEFAULT_EVIL_NAME_ID}</saml:NameID>`);
      for (const value of originalSignatureValues) {
        expect(xml).toContain(value);
      }
      await expect(sp.validatePostResponseAsync({ SAMLResponse })).rejects.toThrow(/signature/i);
    });

    it('refuses to build XSW1 from a response whose Response element is not signed', () => {
      expect(() => applyXsw(1, idp.buildResponse({ ...base, sign: 'assertion' }))).toThrow(/signed Response/);
    });

    it('refuses to build XSW3 from a response whose Assertion is not signed', () => {
      expect(() => applyXsw(3, idp.buildResponse({ ...base, sign: 'response' }))).toThrow(/signed Assertion/);
    });
  });

  describe('NameID comment injection', () => {
    it('splits the NameID with a comment without breaking the signature, and node-saml reads the whole value', async () => {
      const signed = idp.buildResponse({ ...base, nameId: 'user@evil.com.example.com' });

      const SAMLResponse = injectNameIdComment(signed, 'user@evil.com');

      expect(decodeSamlResponse(SAMLResponse)).toContain('>user@evil.com<!---->.example.com</saml:NameID>');
      const { profile } = await sp.validatePostResponseAsync({ SAMLResponse });
      expect(profile?.nameID).toBe('user@evil.com.example.com');
    });

    it('refuses a prefix the NameID does not extend', () => {
      expect(() => injectNameIdComment(idp.buildResponse(base), 'bob@')).toThrow(/does not extend/);
    });
  });

  describe('metadata and AuthnRequests', () => {
    it('publishes metadata that parseIdpMetadata reads back, including extra rotation certificates', () => {
      const nextKey = generateSigningCredentials('next');

      const parsed = parseIdpMetadata(idp.metadataXml({ additionalCertificates: [nextKey.certificatePem] }));

      expect(parsed).toEqual({
        entityId: idp.entityId,
        ssoUrl: idp.ssoUrl,
        certificates: [idp.certificatePem, nextKey.certificatePem],
      });
    });

    it('reads the AuthnRequest node-saml sends over HTTP-Redirect', async () => {
      const requester = serviceProvider(idp, {
        identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
        forceAuthn: true,
      });

      const url = await requester.getAuthorizeUrlAsync('relay-123', undefined, {});
      const request = parseAuthnRequest(url);

      expect(url.startsWith(`${idp.ssoUrl}?`)).toBe(true);
      expect(request.id).toMatch(/^_/);
      expect(request.acsUrl).toBe(ACS_URL);
      expect(request.issuer).toBe(SP_ENTITY_ID);
      expect(request.forceAuthn).toBe(true);
      expect(request.nameIdFormat).toBe('urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress');
      expect(request.relayState).toBe('relay-123');
      expect(request.destination).toBe(idp.ssoUrl);
    });

    it('answers a parsed AuthnRequest with a response node-saml accepts when it tracks InResponseTo', async () => {
      const tracking = serviceProvider(idp, { validateInResponseTo: ValidateInResponseTo.always });
      const request = parseAuthnRequest(await tracking.getAuthorizeUrlAsync('', undefined, {}));

      const SAMLResponse = idp.buildResponseFor(request, { nameId: LEGIT });
      const { profile } = await tracking.validatePostResponseAsync({ SAMLResponse });

      expect(profile?.nameID).toBe(LEGIT);
      expect(profile?.inResponseTo).toBe(request.id);
    });

    it('refuses a redirect URL without a SAMLRequest', () => {
      expect(() => parseAuthnRequest('https://idp.example/sso?RelayState=x')).toThrow(/no SAMLRequest/);
    });
  });
});
