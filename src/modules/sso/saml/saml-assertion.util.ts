import type { Document, Element, Node } from '@xmldom/xmldom';
import { childElements, firstChildElement, parseSamlXml, SAML_NS } from './xml/saml-xml.util';

export const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

const COMMENT_NODE = 8;

/**
 * Why a response or assertion was refused: a closed set of snake_case words for the audit
 * trail. The browser only ever sees the contract code (sso_error).
 */
export type SamlCheckFailure =
  | 'not_a_response'
  | 'xml_comment_in_response'
  | 'destination_missing'
  | 'destination_mismatch'
  | 'response_issuer_mismatch'
  | 'in_response_to_missing'
  | 'in_response_to_mismatch'
  | 'assertion_id_missing'
  | 'assertion_issuer_mismatch'
  | 'audience_mismatch'
  | 'assertion_not_yet_valid'
  | 'assertion_expired'
  | 'invalid_timestamp'
  | 'bearer_confirmation_missing'
  | 'recipient_mismatch'
  | 'subject_in_response_to_mismatch'
  | 'subject_confirmation_expiry_missing'
  | 'subject_confirmation_expired'
  | 'name_id_missing';

export interface SubjectConfirmation {
  method: string | null;
  recipient: string | null;
  inResponseTo: string | null;
  notBefore: string | null;
  notOnOrAfter: string | null;
}

/** What the service reads from an assertion whose signature has been verified. */
export interface SamlAssertion {
  id: string | null;
  issuer: string | null;
  nameId: string | null;
  nameIdFormat: string | null;
  sessionIndex: string | null;
  authnContextClassRefs: string[];
  /** One list of Audience values per AudienceRestriction. */
  audienceRestrictions: string[][];
  notBefore: string | null;
  notOnOrAfter: string | null;
  confirmations: SubjectConfirmation[];
  /** Attribute name → every non-empty value, from all AttributeStatements. */
  attributes: Record<string, string[]>;
}

export interface ExpectedResponse {
  /** The IdP's entity id (the provider's entityId). */
  idpEntityId: string;
  /** The SP entity id the assertion must be addressed to. */
  spEntityId: string;
  /** The ACS URL: Destination of the Response, Recipient of the subject confirmation. */
  acsUrl: string;
  /** ID of the AuthnRequest the login session sent. */
  requestId: string;
  nowMs: number;
  skewMs: number;
}

function hasComment(node: Node): boolean {
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === COMMENT_NODE || hasComment(child)) return true;
  }
  return false;
}

function text(element: Element | undefined): string | null {
  const value = element?.textContent?.trim();
  return value ? value : null;
}

function attribute(element: Element | undefined, name: string): string | null {
  return element && element.hasAttribute(name) ? element.getAttribute(name) : null;
}

/**
 * The checks on the Response envelope, made on the untrusted document before any signature
 * is looked at. The envelope is often unsigned, so these are consistency checks; what the
 * sign-in relies on is re-checked on the signed assertion.
 *
 * A comment anywhere refuses the response: exclusive canonicalization drops comments, so a
 * comment can split a signed value (`user@evil.com<!---->.example.com`) without breaking
 * the signature, and no IdP needs one.
 */
export function checkResponseEnvelope(doc: Document, expected: Pick<ExpectedResponse, 'idpEntityId' | 'acsUrl' | 'requestId'>): SamlCheckFailure | null {
  const response = doc.documentElement;
  if (!response || response.namespaceURI !== SAML_NS.protocol || response.localName !== 'Response') return 'not_a_response';
  if (hasComment(doc)) return 'xml_comment_in_response';
  const destination = attribute(response, 'Destination');
  if (destination === null) return 'destination_missing';
  if (destination !== expected.acsUrl) return 'destination_mismatch';
  const issuer = firstChildElement(response, SAML_NS.assertion, 'Issuer');
  if (issuer && text(issuer) !== expected.idpEntityId) return 'response_issuer_mismatch';
  const inResponseTo = attribute(response, 'InResponseTo');
  if (inResponseTo === null) return 'in_response_to_missing';
  if (inResponseTo !== expected.requestId) return 'in_response_to_mismatch';
  return null;
}

/** Parses the canonical XML of a verified assertion (what the signature covers, nothing else). */
export function readAssertion(xml: string): SamlAssertion {
  const assertion = parseSamlXml(xml).documentElement!;
  if (assertion.namespaceURI !== SAML_NS.assertion || assertion.localName !== 'Assertion') {
    throw new Error('The verified XML is not a SAML assertion');
  }
  const a = SAML_NS.assertion;
  const subject = firstChildElement(assertion, a, 'Subject');
  const nameId = subject ? firstChildElement(subject, a, 'NameID') : undefined;
  const conditions = firstChildElement(assertion, a, 'Conditions');
  const authnStatements = childElements(assertion, a, 'AuthnStatement');

  const attributes: Record<string, string[]> = {};
  for (const statement of childElements(assertion, a, 'AttributeStatement')) {
    for (const attr of childElements(statement, a, 'Attribute')) {
      const name = attribute(attr, 'Name');
      if (!name) continue;
      const values = childElements(attr, a, 'AttributeValue')
        .map((value) => text(value))
        .filter((value): value is string => value !== null);
      attributes[name] = [...(attributes[name] ?? []), ...values];
    }
  }

  return {
    id: attribute(assertion, 'ID'),
    issuer: text(firstChildElement(assertion, a, 'Issuer')),
    nameId: text(nameId),
    nameIdFormat: attribute(nameId, 'Format'),
    sessionIndex: authnStatements.map((s) => attribute(s, 'SessionIndex')).find((index) => index !== null) ?? null,
    authnContextClassRefs: authnStatements
      .flatMap((s) => childElements(s, a, 'AuthnContext'))
      .flatMap((c) => childElements(c, a, 'AuthnContextClassRef'))
      .map((ref) => text(ref))
      .filter((ref): ref is string => ref !== null),
    audienceRestrictions: conditions
      ? childElements(conditions, a, 'AudienceRestriction').map((r) =>
          childElements(r, a, 'Audience')
            .map((audience) => text(audience))
            .filter((audience): audience is string => audience !== null),
        )
      : [],
    notBefore: attribute(conditions, 'NotBefore'),
    notOnOrAfter: attribute(conditions, 'NotOnOrAfter'),
    confirmations: subject
      ? childElements(subject, a, 'SubjectConfirmation').map((c) => {
          const data = firstChildElement(c, a, 'SubjectConfirmationData');
          return {
            method: attribute(c, 'Method'),
            recipient: attribute(data, 'Recipient'),
            inResponseTo: attribute(data, 'InResponseTo'),
            notBefore: attribute(data, 'NotBefore'),
            notOnOrAfter: attribute(data, 'NotOnOrAfter'),
          };
        })
      : [],
    attributes,
  };
}

function instantMs(value: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** `[notBefore, notOnOrAfter)` with the skew on both sides; null when within it. */
function windowFailure(notBefore: string | null, notOnOrAfter: string | null, e: ExpectedResponse, expired: SamlCheckFailure): SamlCheckFailure | null {
  if (notBefore !== null) {
    const ms = instantMs(notBefore);
    if (ms === null) return 'invalid_timestamp';
    if (e.nowMs + e.skewMs < ms) return 'assertion_not_yet_valid';
  }
  if (notOnOrAfter !== null) {
    const ms = instantMs(notOnOrAfter);
    if (ms === null) return 'invalid_timestamp';
    if (e.nowMs - e.skewMs >= ms) return expired;
  }
  return null;
}

/**
 * The Web Browser SSO profile's rules on a verified assertion (SAML profiles 4.1.4.2–3), the
 * ones node-saml leaves out included: Issuer, Audience, a bearer confirmation whose
 * Recipient is the ACS and whose InResponseTo is the request this login session sent, and
 * the validity windows. Returns the confirmation the sign-in rests on.
 */
export function checkAssertion(a: SamlAssertion, e: ExpectedResponse): { confirmation: SubjectConfirmation } | { failure: SamlCheckFailure } {
  if (!a.id) return { failure: 'assertion_id_missing' };
  if (a.issuer !== e.idpEntityId) return { failure: 'assertion_issuer_mismatch' };
  if (a.audienceRestrictions.length === 0 || !a.audienceRestrictions.every((audiences) => audiences.includes(e.spEntityId))) {
    return { failure: 'audience_mismatch' };
  }
  const conditions = windowFailure(a.notBefore, a.notOnOrAfter, e, 'assertion_expired');
  if (conditions) return { failure: conditions };

  const bearer = a.confirmations.filter((c) => c.method === BEARER);
  if (bearer.length === 0) return { failure: 'bearer_confirmation_missing' };
  const addressed = bearer.filter((c) => c.recipient === e.acsUrl);
  if (addressed.length === 0) return { failure: 'recipient_mismatch' };
  const answering = addressed.filter((c) => c.inResponseTo === e.requestId);
  if (answering.length === 0) return { failure: 'subject_in_response_to_mismatch' };
  let failure: SamlCheckFailure = 'subject_confirmation_expiry_missing';
  for (const confirmation of answering) {
    if (confirmation.notOnOrAfter === null) continue;
    const window = windowFailure(confirmation.notBefore, confirmation.notOnOrAfter, e, 'subject_confirmation_expired');
    if (window === null) {
      if (!a.nameId) return { failure: 'name_id_missing' };
      return { confirmation };
    }
    failure = window;
  }
  return { failure };
}

/** The instant until which an assertion could be presented: its latest expiry. */
export function assertionExpiryMs(a: SamlAssertion, confirmation: SubjectConfirmation): number {
  const instants = [a.notOnOrAfter, confirmation.notOnOrAfter]
    .map((value) => (value === null ? null : instantMs(value)))
    .filter((ms): ms is number => ms !== null);
  return Math.max(...instants);
}
