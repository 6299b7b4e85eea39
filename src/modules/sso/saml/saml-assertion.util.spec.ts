import { createTestSamlIdp, decodeSamlResponse, injectNameIdComment, TestSamlIdp } from '../../../../test/support/idp/saml-idp';
import { BEARER, checkAssertion, checkResponseEnvelope, ExpectedResponse, readAssertion, SamlAssertion } from './saml-assertion.util';
import { parseSamlXml, SAML_NS } from './xml/saml-xml.util';

const ACS = 'https://rmm.example/api/v1/sso/saml/acs';
const SP = 'https://rmm.example/api/v1/sso/saml/metadata/p1';
const NOW = Date.parse('2026-01-10T12:00:00Z');

describe('SAML response checks', () => {
  let idp: TestSamlIdp;
  beforeAll(() => {
    idp = createTestSamlIdp();
  });

  const expected = (over: Partial<ExpectedResponse> = {}): ExpectedResponse => ({
    idpEntityId: idp.entityId,
    spEntityId: SP,
    acsUrl: ACS,
    requestId: '_req1',
    nowMs: NOW,
    skewMs: 60_000,
    ...over,
  });
  const responseXml = (over: Parameters<TestSamlIdp['buildResponseXml']>[0] | object = {}) =>
    idp.buildResponseXml({ nameId: 'ann@corp.example', spEntityId: SP, acsUrl: ACS, inResponseTo: '_req1', issueInstant: new Date(NOW), ...over });
  const assertionOf = (xml: string): SamlAssertion => {
    const assertion = parseSamlXml(xml).getElementsByTagNameNS(SAML_NS.assertion, 'Assertion')[0];
    return readAssertion(assertion.toString());
  };

  describe('checkResponseEnvelope', () => {
    it('accepts a response addressed to the ACS, from the IdP, answering the request', () => {
      expect(checkResponseEnvelope(parseSamlXml(responseXml()), expected())).toBeNull();
    });

    it.each([
      [{ destination: 'https://other.example/acs' }, 'destination_mismatch'],
      [{ destination: null }, 'destination_missing'],
      [{ issuer: 'https://other-idp.example' }, 'response_issuer_mismatch'],
      [{ inResponseTo: '_other' }, 'in_response_to_mismatch'],
      [{ inResponseTo: null }, 'in_response_to_missing'],
    ])('refuses %j with %s', (over, failure) => {
      expect(checkResponseEnvelope(parseSamlXml(responseXml(over)), expected())).toBe(failure);
    });

    it('refuses any comment in the response, such as one splitting the NameID', () => {
      const split = decodeSamlResponse(injectNameIdComment(Buffer.from(responseXml({ nameId: 'user@evil.com.example.com' })).toString('base64'), 'user@evil.com'));
      expect(checkResponseEnvelope(parseSamlXml(split), expected())).toBe('xml_comment_in_response');
    });

    it('refuses a document that is not a SAML Response', () => {
      expect(checkResponseEnvelope(parseSamlXml(idp.metadataXml()), expected())).toBe('not_a_response');
    });
  });

  describe('readAssertion', () => {
    it('reads the NameID, SessionIndex, authentication context and every attribute value', () => {
      const a = assertionOf(responseXml({ sessionIndex: '_s1', attributes: { groups: ['a', 'b'], mail: 'ann@corp.example' } }));
      expect(a).toMatchObject({
        issuer: idp.entityId,
        nameId: 'ann@corp.example',
        sessionIndex: '_s1',
        audienceRestrictions: [[SP]],
        attributes: { groups: ['a', 'b'], mail: ['ann@corp.example'] },
      });
      expect(a.authnContextClassRefs).toEqual(['urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport']);
      expect(a.confirmations).toEqual([{ method: BEARER, recipient: ACS, inResponseTo: '_req1', notBefore: null, notOnOrAfter: '2026-01-10T12:05:00Z' }]);
    });
  });

  describe('checkAssertion', () => {
    it('accepts an assertion that satisfies the profile and returns its bearer confirmation', () => {
      const result = checkAssertion(assertionOf(responseXml()), expected());
      expect(result).toEqual({ confirmation: expect.objectContaining({ recipient: ACS, inResponseTo: '_req1' }) });
    });

    it.each([
      [{ issuer: 'https://other-idp.example' }, 'assertion_issuer_mismatch'],
      [{ audience: 'https://other-sp.example' }, 'audience_mismatch'],
      [{ audience: null }, 'audience_mismatch'],
      [{ recipient: 'https://rmm.example/elsewhere' }, 'recipient_mismatch'],
      [{ recipient: null }, 'recipient_mismatch'],
      [{ inResponseTo: '_other' }, 'subject_in_response_to_mismatch'],
      [{ notBefore: new Date(NOW + 2 * 60_000) }, 'assertion_not_yet_valid'],
      [{ notBefore: new Date(NOW - 10 * 60_000), notOnOrAfter: new Date(NOW - 2 * 60_000) }, 'assertion_expired'],
    ])('refuses %j with %s', (over, failure) => {
      expect(checkAssertion(assertionOf(responseXml(over)), expected())).toEqual({ failure });
    });

    it('allows the clock skew on both edges of the validity window', () => {
      const early = assertionOf(responseXml({ notBefore: new Date(NOW + 59_000) }));
      const late = assertionOf(responseXml({ notBefore: new Date(NOW - 10 * 60_000), notOnOrAfter: new Date(NOW - 59_000) }));
      expect(checkAssertion(early, expected())).toHaveProperty('confirmation');
      expect(checkAssertion(late, expected())).toHaveProperty('confirmation');
      expect(checkAssertion(assertionOf(responseXml({ notBefore: new Date(NOW - 10 * 60_000), notOnOrAfter: new Date(NOW - 60_000) })), expected())).toEqual({
        failure: 'assertion_expired',
      });
    });

    it('needs an expiry on the subject confirmation', () => {
      const a = assertionOf(responseXml({ notOnOrAfter: null }));
      expect(checkAssertion(a, expected())).toEqual({ failure: 'subject_confirmation_expiry_missing' });
    });

    it('refuses a confirmation method other than bearer', () => {
      const a = assertionOf(responseXml());
      expect(checkAssertion({ ...a, confirmations: a.confirmations.map((c) => ({ ...c, method: 'urn:oasis:names:tc:SAML:2.0:cm:holder-of-key' })) }, expected())).toEqual({
        failure: 'bearer_confirmation_missing',
      });
    });

    it('refuses timestamps that are not xs:dateTime', () => {
      const a = assertionOf(responseXml());
      expect(checkAssertion({ ...a, notBefore: 'yesterday' }, expected())).toEqual({ failure: 'invalid_timestamp' });
    });
  });
});
