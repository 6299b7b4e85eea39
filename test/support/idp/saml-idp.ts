/**
 * A SAML 2.0 identity provider for tests: it signs real responses with a real key and
 * certificate, and builds the well-known forged variants a service provider must reject.
 *
 * There is no HTTP server: the service's login route redirects to `idp.ssoUrl`, the test reads
 * that redirect with `parseAuthnRequest`, builds the answer with `buildResponse` (or
 * `buildResponseFor`) and POSTs `SAMLResponse` (+ `RelayState`) to the service's ACS itself.
 *
 *   const idp = createTestSamlIdp();
 *   // provider config: { entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificate: idp.certificatePem }
 *   // or { idpMetadataXml: idp.metadataXml() }
 *   const request = parseAuthnRequest(loginRedirect.headers.location);
 *   const SAMLResponse = idp.buildResponseFor(request, { nameId: 'ann@customer-a.example' });
 *   await agent.post('/api/v1/sso/saml/acs').type('form').send({ SAMLResponse, RelayState: request.relayState });
 *
 * Key material comes from the `openssl` command line (no X.509 library is installed); each IdP
 * costs one 2048-bit key generation, roughly a tenth of a second.
 */
import { execFileSync } from 'node:child_process';
import { createPublicKey, createSign, createVerify, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { DOMImplementation, XMLSerializer, type Document, type Element } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import {
  NAMEID_FORMAT_EMAIL,
  SAML_BINDING,
  SAML_NS,
  XML_DECLARATION,
  childElements,
  firstChildElement,
  parseSamlXml,
  pemToCertificateBody,
} from '../../../src/modules/sso/saml/xml/saml-xml.util';

export interface SigningCredentials {
  privateKeyPem: string;
  certificatePem: string;
}

export type SignMode = 'assertion' | 'response' | 'both' | 'none';

/**
 * Every field has a default so a test states only what it is about. `null` omits the element or
 * attribute altogether (to prove the SP rejects its absence); `undefined` takes the default.
 */
export interface BuildResponseOptions {
  nameId: string;
  /** The SP entity id; the default audience. */
  spEntityId?: string;
  /** The SP ACS URL; the default Destination and Recipient. */
  acsUrl?: string;
  /** Omitted by default, as in an IdP-initiated response. */
  inResponseTo?: string | null;
  /** Defaults to the IdP's entity id; used for both the Response and the Assertion Issuer. */
  issuer?: string;
  nameIdFormat?: string;
  attributes?: Record<string, string | string[]>;
  /** Defaults to a fresh random index. */
  sessionIndex?: string | null;
  issueInstant?: Date;
  /** Defaults to one minute ago. */
  notBefore?: Date | null;
  /** Defaults to five minutes from now; also the SubjectConfirmationData NotOnOrAfter. */
  notOnOrAfter?: Date | null;
  /** Defaults to spEntityId. */
  audience?: string | null;
  /** Defaults to acsUrl. */
  destination?: string | null;
  /** Defaults to acsUrl. */
  recipient?: string | null;
  /** Defaults to 'assertion'. */
  sign?: SignMode;
  /** Sign with these credentials instead of the IdP's own (an "unknown key" response). */
  key?: SigningCredentials;
}

export interface ParsedAuthnRequest {
  id: string;
  acsUrl: string | null;
  issuer: string | null;
  forceAuthn: boolean;
  nameIdFormat: string | null;
  relayState: string | null;
  destination: string | null;
  xml: string;
}

export type XswVariant = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

export const XSW_VARIANTS: readonly XswVariant[] = [1, 2, 3, 4, 5, 6, 7, 8];

export const DEFAULT_EVIL_NAME_ID = 'attacker@evil.example';

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const PASSWORD_PROTECTED = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport';
const ATTRNAME_URI = 'urn:oasis:names:tc:SAML:2.0:attrname-format:uri';
const XMLNS = 'http://www.w3.org/2000/xmlns/';

/** A fresh RSA-2048 key and self-signed SHA-256 certificate, made by the openssl CLI. */
export function generateSigningCredentials(commonName = 'test-saml-idp'): SigningCredentials {
  if (!/^[A-Za-z0-9 .-]+$/.test(commonName)) {
    throw new Error(`commonName must be plain text, got ${JSON.stringify(commonName)}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'saml-idp-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '3650', '-subj', `/CN=${commonName}`, '-keyout', keyPath, '-out', certPath],
      { stdio: 'pipe' },
    );
    return { privateKeyPem: readFileSync(keyPath, 'utf8'), certificatePem: readFileSync(certPath, 'utf8') };
  } catch (err) {
    throw new Error(`openssl could not create the test IdP certificate: ${(err as Error).message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface TestSamlIdpOptions {
  entityId?: string;
  /** Where AuthnRequests are sent; nothing listens there, tests read the redirect instead. */
  ssoUrl?: string;
  credentials?: SigningCredentials;
}

export function createTestSamlIdp(options: TestSamlIdpOptions = {}): TestSamlIdp {
  return new TestSamlIdp(
    options.entityId ?? 'https://idp.test.example/saml/metadata',
    options.ssoUrl ?? 'https://idp.test.example/saml/sso',
    options.credentials ?? generateSigningCredentials(),
  );
}

export class TestSamlIdp {
  constructor(
    readonly entityId: string,
    readonly ssoUrl: string,
    private readonly credentials: SigningCredentials,
  ) {}

  get certificatePem(): string {
    return this.credentials.certificatePem;
  }

  get privateKeyPem(): string {
    return this.credentials.privateKeyPem;
  }

  /** A base64 SAMLResponse, as the HTTP-POST binding carries it. */
  buildResponse(options: BuildResponseOptions): string {
    return toBase64(this.buildResponseXml(options));
  }

  /** Answers a parsed AuthnRequest: InResponseTo, ACS URL and audience come from the request. */
  buildResponseFor(request: ParsedAuthnRequest, options: BuildResponseOptions): string {
    const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
    return this.buildResponse({
      inResponseTo: request.id,
      acsUrl: request.acsUrl ?? undefined,
      spEntityId: request.issuer ?? undefined,
      nameIdFormat: request.nameIdFormat ?? undefined,
      ...given,
      nameId: options.nameId,
    });
  }

  buildResponseXml(options: BuildResponseOptions): string {
    const now = options.issueInstant ?? new Date();
    const spEntityId = options.spEntityId ?? 'https://sp.test.example/saml/metadata';
    const acsUrl = options.acsUrl ?? 'https://sp.test.example/api/v1/sso/saml/acs';
    const issuer = options.issuer ?? this.entityId;
    const notBefore = pick(options.notBefore, new Date(now.getTime() - 60_000));
    const notOnOrAfter = pick(options.notOnOrAfter, new Date(now.getTime() + 5 * 60_000));
    const responseId = newId();
    const assertionId = newId();

    const doc = new DOMImplementation().createDocument(SAML_NS.protocol, 'samlp:Response', null);
    const response = doc.documentElement!;
    response.setAttributeNS(XMLNS, 'xmlns:saml', SAML_NS.assertion);
    response.setAttribute('ID', responseId);
    response.setAttribute('Version', '2.0');
    response.setAttribute('IssueInstant', instant(now));
    setOptional(response, 'Destination', pick(options.destination, acsUrl));
    setOptional(response, 'InResponseTo', options.inResponseTo ?? null);
    append(doc, response, SAML_NS.assertion, 'saml:Issuer', issuer);
    const status = append(doc, response, SAML_NS.protocol, 'samlp:Status');
    append(doc, status, SAML_NS.protocol, 'samlp:StatusCode').setAttribute('Value', STATUS_SUCCESS);

    const assertion = append(doc, response, SAML_NS.assertion, 'saml:Assertion');
    assertion.setAttribute('ID', assertionId);
    assertion.setAttribute('Version', '2.0');
    assertion.setAttribute('IssueInstant', instant(now));
    append(doc, assertion, SAML_NS.assertion, 'saml:Issuer', issuer);

    const subject = append(doc, assertion, SAML_NS.assertion, 'saml:Subject');
    append(doc, subject, SAML_NS.assertion, 'saml:NameID', options.nameId).setAttribute(
      'Format',
      options.nameIdFormat ?? NAMEID_FORMAT_EMAIL,
    );
    const confirmation = append(doc, subject, SAML_NS.assertion, 'saml:SubjectConfirmation');
    confirmation.setAttribute('Method', BEARER);
    const confirmationData = append(doc, confirmation, SAML_NS.assertion, 'saml:SubjectConfirmationData');
    setOptional(confirmationData, 'InResponseTo', options.inResponseTo ?? null);
    setOptional(confirmationData, 'NotOnOrAfter', notOnOrAfter && instant(notOnOrAfter));
    setOptional(confirmationData, 'Recipient', pick(options.recipient, acsUrl));

    const conditions = append(doc, assertion, SAML_NS.assertion, 'saml:Conditions');
    setOptional(conditions, 'NotBefore', notBefore && instant(notBefore));
    setOptional(conditions, 'NotOnOrAfter', notOnOrAfter && instant(notOnOrAfter));
    const audience = pick(options.audience, spEntityId);
    if (audience !== null) {
      const restriction = append(doc, conditions, SAML_NS.assertion, 'saml:AudienceRestriction');
      append(doc, restriction, SAML_NS.assertion, 'saml:Audience', audience);
    }

    const authn = append(doc, assertion, SAML_NS.assertion, 'saml:AuthnStatement');
    authn.setAttribute('AuthnInstant', instant(now));
    setOptional(authn, 'SessionIndex', pick(options.sessionIndex, newId()));
    const context = append(doc, authn, SAML_NS.assertion, 'saml:AuthnContext');
    append(doc, context, SAML_NS.assertion, 'saml:AuthnContextClassRef', PASSWORD_PROTECTED);

    const attributes = Object.entries(options.attributes ?? {});
    if (attributes.length > 0) {
      const statement = append(doc, assertion, SAML_NS.assertion, 'saml:AttributeStatement');
      for (const [name, value] of attributes) {
        const attribute = append(doc, statement, SAML_NS.assertion, 'saml:Attribute');
        attribute.setAttribute('Name', name);
        attribute.setAttribute('NameFormat', ATTRNAME_URI);
        for (const single of Array.isArray(value) ? value : [value]) {
          append(doc, attribute, SAML_NS.assertion, 'saml:AttributeValue', single);
        }
      }
    }

    const key = options.key ?? this.credentials;
    const sign = options.sign ?? 'assertion';
    let xml = serialize(doc);
    if (sign === 'assertion' || sign === 'both') {
      xml = signElement(xml, 'Assertion', assertionId, key);
    }
    if (sign === 'response' || sign === 'both') {
      xml = signElement(xml, 'Response', responseId, key);
    }
    return xml;
  }

  /**
   * The IdP's metadata. `additionalCertificates` publishes more signing keys, as an IdP does
   * while rotating.
   */
  metadataXml(options: { additionalCertificates?: string[] } = {}): string {
    const doc = new DOMImplementation().createDocument(SAML_NS.metadata, 'md:EntityDescriptor', null);
    const root = doc.documentElement!;
    root.setAttribute('entityID', this.entityId);
    const idp = append(doc, root, SAML_NS.metadata, 'md:IDPSSODescriptor');
    idp.setAttribute('WantAuthnRequestsSigned', 'false');
    idp.setAttribute('protocolSupportEnumeration', SAML_NS.protocol);
    for (const pem of [this.certificatePem, ...(options.additionalCertificates ?? [])]) {
      const keyDescriptor = append(doc, idp, SAML_NS.metadata, 'md:KeyDescriptor');
      keyDescriptor.setAttribute('use', 'signing');
      const keyInfo = append(doc, keyDescriptor, SAML_NS.dsig, 'ds:KeyInfo');
      const data = append(doc, keyInfo, SAML_NS.dsig, 'ds:X509Data');
      append(doc, data, SAML_NS.dsig, 'ds:X509Certificate', pemToCertificateBody(pem));
    }
    append(doc, idp, SAML_NS.metadata, 'md:NameIDFormat', NAMEID_FORMAT_EMAIL);
    for (const binding of [SAML_BINDING.httpRedirect, SAML_BINDING.httpPost]) {
      const service = append(doc, idp, SAML_NS.metadata, 'md:SingleSignOnService');
      service.setAttribute('Binding', binding);
      service.setAttribute('Location', this.ssoUrl);
    }
    return `${XML_DECLARATION}\n${serialize(doc)}`;
  }

  /**
   * A Response carrying a genuine signature by this IdP that covers only an `samlp:Extensions`
   * element, next to an unsigned Assertion naming `evilNameId`. An SP that merely checks "the
   * response has a valid signature" without asking what it signs accepts it.
   */
  signatureNotCoveringAssertion(responseBase64: string, evilNameId = DEFAULT_EVIL_NAME_ID): string {
    const doc = decode(responseBase64);
    const response = doc.documentElement!;
    for (const signature of Array.from(doc.getElementsByTagNameNS(SAML_NS.dsig, 'Signature'))) {
      signature.parentNode!.removeChild(signature);
    }
    setNameId(requireChild(response, SAML_NS.assertion, 'Assertion'), evilNameId);
    const extensionsId = newId();
    const extensions = doc.createElementNS(SAML_NS.protocol, 'samlp:Extensions');
    extensions.setAttribute('ID', extensionsId);
    response.insertBefore(extensions, requireChild(response, SAML_NS.assertion, 'Issuer').nextSibling);
    const xml = signElement(serialize(doc), 'Extensions', extensionsId, this.credentials, 'Response');
    return toBase64(xml);
  }
}

/** Reads an HTTP-Redirect binding URL: inflates `SAMLRequest` and returns what an IdP acts on. */
export function parseAuthnRequest(redirectUrl: string): ParsedAuthnRequest {
  const url = new URL(redirectUrl);
  const encoded = url.searchParams.get('SAMLRequest');
  if (!encoded) {
    throw new Error(`no SAMLRequest parameter in ${redirectUrl}`);
  }
  const xml = inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8');
  const request = parseSamlXml(xml).documentElement!;
  if (request.namespaceURI !== SAML_NS.protocol || request.localName !== 'AuthnRequest') {
    throw new Error(`SAMLRequest is a ${request.localName}, not an AuthnRequest`);
  }
  const id = request.getAttribute('ID');
  if (!id) {
    throw new Error('AuthnRequest has no ID');
  }
  return {
    id,
    acsUrl: request.getAttribute('AssertionConsumerServiceURL'),
    issuer: firstChildElement(request, SAML_NS.assertion, 'Issuer')?.textContent?.trim() ?? null,
    forceAuthn: request.getAttribute('ForceAuthn') === 'true',
    nameIdFormat: firstChildElement(request, SAML_NS.protocol, 'NameIDPolicy')?.getAttribute('Format') ?? null,
    relayState: url.searchParams.get('RelayState'),
    destination: request.getAttribute('Destination'),
    xml,
  };
}

/**
 * Signature-wrapping attacks as catalogued by SAML Raider (XSW1–XSW8). Each keeps the
 * genuinely signed element in the document, so its signature still verifies, and puts an
 * "evil" copy naming `evilNameId` where a careless SP will read it:
 *
 * - XSW1: the signed Response is copied, unsigned, into its own ds:Signature; the outer
 *   Response gets a new ID and the evil assertion. Needs a signed Response.
 * - XSW2: as XSW1, with the copy placed before ds:Signature as a sibling.
 * - XSW3: an evil unsigned Assertion copy (new ID) before the signed Assertion.
 * - XSW4: an evil Assertion copy (new ID) wrapping the signed Assertion as its child.
 * - XSW5: the signed Assertion itself is altered (new ID, evil NameID) and keeps its
 *   signature; a pristine unsigned copy is appended to the Response.
 * - XSW6: as XSW5, with the pristine copy inside the altered Assertion's ds:Signature.
 * - XSW7: an evil copy (same ID) inside a samlp:Extensions before the signed Assertion.
 * - XSW8: the signed Assertion is altered in place; a pristine copy (same ID) sits in a
 *   ds:Object inside its ds:Signature.
 * XSW3–XSW8 need a signed Assertion.
 */
export function applyXsw(variant: XswVariant, responseBase64: string, evilNameId = DEFAULT_EVIL_NAME_ID): string {
  const doc = decode(responseBase64);
  const response = doc.documentElement!;

  if (variant === 1 || variant === 2) {
    const signature = requireChild(response, SAML_NS.dsig, 'Signature', 'XSW1/XSW2 need a signed Response');
    const copy = response.cloneNode(true) as Element;
    copy.removeChild(requireChild(copy, SAML_NS.dsig, 'Signature'));
    if (variant === 1) {
      signature.appendChild(copy);
    } else {
      response.insertBefore(copy, signature);
    }
    response.setAttribute('ID', newId());
    setNameId(requireChild(response, SAML_NS.assertion, 'Assertion'), evilNameId);
    return encode(doc);
  }

  const assertion = requireChild(response, SAML_NS.assertion, 'Assertion');
  const signature = requireChild(assertion, SAML_NS.dsig, 'Signature', 'XSW3–XSW8 need a signed Assertion');
  const unsignedCopy = (): Element => {
    const copy = assertion.cloneNode(true) as Element;
    copy.removeChild(requireChild(copy, SAML_NS.dsig, 'Signature'));
    return copy;
  };

  switch (variant) {
    case 3: {
      const evil = unsignedCopy();
      evil.setAttribute('ID', newId());
      setNameId(evil, evilNameId);
      response.insertBefore(evil, assertion);
      break;
    }
    case 4: {
      const evil = unsignedCopy();
      evil.setAttribute('ID', newId());
      setNameId(evil, evilNameId);
      response.replaceChild(evil, assertion);
      evil.appendChild(assertion);
      break;
    }
    case 5:
    case 6: {
      const pristine = unsignedCopy();
      assertion.setAttribute('ID', newId());
      setNameId(assertion, evilNameId);
      (variant === 5 ? response : signature).appendChild(pristine);
      break;
    }
    case 7: {
      const evil = unsignedCopy();
      setNameId(evil, evilNameId);
      const extensions = doc.createElementNS(SAML_NS.protocol, 'samlp:Extensions');
      extensions.appendChild(evil);
      response.insertBefore(extensions, assertion);
      break;
    }
    case 8: {
      const pristine = unsignedCopy();
      setNameId(assertion, evilNameId);
      const object = doc.createElementNS(SAML_NS.dsig, 'ds:Object');
      object.appendChild(pristine);
      signature.appendChild(object);
      break;
    }
  }
  return encode(doc);
}

/**
 * Splits the Assertion's NameID text with an empty comment right after `prefix`, e.g.
 * `user@evil.com.example.com` → `user@evil.com<!---->.example.com`. Exclusive c14n drops
 * comments, so the IdP's signature stays valid; an SP that reads only the first text node
 * sees `user@evil.com`.
 */
export function injectNameIdComment(responseBase64: string, prefix: string): string {
  const doc = decode(responseBase64);
  const assertion = requireChild(doc.documentElement!, SAML_NS.assertion, 'Assertion');
  const nameId = requireChild(requireChild(assertion, SAML_NS.assertion, 'Subject'), SAML_NS.assertion, 'NameID');
  const value = nameId.textContent ?? '';
  if (!value.startsWith(prefix) || value.length === prefix.length) {
    throw new Error(`NameID ${JSON.stringify(value)} does not extend ${JSON.stringify(prefix)}`);
  }
  nameId.textContent = '';
  nameId.appendChild(doc.createTextNode(prefix));
  nameId.appendChild(doc.createComment(''));
  nameId.appendChild(doc.createTextNode(value.slice(prefix.length)));
  return encode(doc);
}

/** The decoded XML of a base64 SAMLResponse, for assertions on its content. */
export function decodeSamlResponse(responseBase64: string): string {
  return Buffer.from(responseBase64, 'base64').toString('utf8');
}

function signElement(
  xml: string,
  localName: 'Assertion' | 'Response' | 'Extensions',
  id: string,
  key: SigningCredentials,
  placeIn: 'Assertion' | 'Response' = localName === 'Assertion' ? 'Assertion' : 'Response',
): string {
  const signer = new SignedXml({
    privateKey: key.privateKeyPem,
    publicCert: key.certificatePem,
    signatureAlgorithm: RSA_SHA256,
    canonicalizationAlgorithm: EXC_C14N,
  });
  signer.addReference({
    xpath: `//*[local-name(.)='${localName}' and @ID='${id}']`,
    transforms: [ENVELOPED, EXC_C14N],
    digestAlgorithm: SHA256,
  });
  const container = placeIn === localName ? `//*[local-name(.)='${localName}' and @ID='${id}']` : `/*[local-name(.)='${placeIn}']`;
  signer.computeSignature(xml, {
    prefix: 'ds',
    location: { reference: `${container}/*[local-name(.)='Issuer']`, action: 'after' },
  });
  return signer.getSignedXml();
}

function append(doc: Document, parent: Element, namespace: string, qualifiedName: string, text?: string): Element {
  const element = doc.createElementNS(namespace, qualifiedName);
  if (text !== undefined) {
    element.appendChild(doc.createTextNode(text));
  }
  parent.appendChild(element);
  return element;
}

function setOptional(element: Element, name: string, value: string | null): void {
  if (value !== null) {
    element.setAttribute(name, value);
  }
}

function pick<T>(value: T | null | undefined, fallback: T): T | null {
  return value === undefined ? fallback : value;
}

function setNameId(assertion: Element, value: string): void {
  const subject = requireChild(assertion, SAML_NS.assertion, 'Subject');
  requireChild(subject, SAML_NS.assertion, 'NameID').textContent = value;
}

function requireChild(parent: Element, namespace: string, localName: string, message?: string): Element {
  const child = childElements(parent, namespace, localName)[0];
  if (!child) {
    throw new Error(message ?? `${parent.localName} has no ${localName} child`);
  }
  return child;
}

function instant(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function newId(): string {
  return `_${randomBytes(20).toString('hex')}`;
}

function serialize(doc: Document): string {
  return new XMLSerializer().serializeToString(doc);
}

function decode(responseBase64: string): Document {
  return parseSamlXml(decodeSamlResponse(responseBase64));
}

function encode(doc: Document): string {
  return toBase64(serialize(doc));
}

function toBase64(xml: string): string {
  return Buffer.from(xml, 'utf8').toString('base64');
}

// ---------------------------------------------------------------- Single Logout (HTTP-Redirect binding)

const RSA_SHA256_QUERY = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const RSA_SHA1_QUERY = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';

export interface LogoutMessageOptions {
  /** Defaults to the IdP's entity id. */
  issuer?: string;
  /** The SP's Single Logout URL the message is sent to; also the default Destination. */
  spSloUrl: string;
  /** null leaves Destination out. */
  destination?: string | null;
  relayState?: string;
  /** 'none' sends no SigAlg/Signature; 'sha1' signs with RSA-SHA1. Default 'sha256'. */
  sign?: 'sha256' | 'sha1' | 'none';
  /** Sign with these credentials instead of the IdP's own. */
  key?: SigningCredentials;
  /** Inserted verbatim before the Issuer (to prove the SP refuses comments). */
  comment?: string;
  /** Defaults to now. */
  issueInstant?: Date;
}

export interface ParsedLogoutMessage {
  kind: 'LogoutRequest' | 'LogoutResponse';
  id: string;
  issuer: string | null;
  destination: string | null;
  nameId: string | null;
  nameIdFormat: string | null;
  sessionIndex: string | null;
  inResponseTo: string | null;
  statusCode: string | null;
  relayState: string | null;
  sigAlg: string | null;
  /** Whether the query signature verifies with `certificatePem`. */
  signedBy(certificatePem: string): boolean;
}

const xmlEscape = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The IdP-initiated LogoutRequest, as the URL the IdP sends the browser to. */
export function buildLogoutRequestUrl(idp: TestSamlIdp, options: LogoutMessageOptions & { nameId: string; nameIdFormat?: string; sessionIndex?: string | null; id?: string }): string {
  const destination = options.destination === undefined ? options.spSloUrl : options.destination;
  const xml =
    `<samlp:LogoutRequest xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}" ID="${options.id ?? newId()}" Version="2.0" IssueInstant="${instant(options.issueInstant ?? new Date())}"` +
    `${destination === null ? '' : ` Destination="${xmlEscape(destination)}"`}>${options.comment ?? ''}` +
    `<saml:Issuer>${xmlEscape(options.issuer ?? idp.entityId)}</saml:Issuer>` +
    `<saml:NameID Format="${xmlEscape(options.nameIdFormat ?? NAMEID_FORMAT_EMAIL)}">${xmlEscape(options.nameId)}</saml:NameID>` +
    `${options.sessionIndex ? `<samlp:SessionIndex>${xmlEscape(options.sessionIndex)}</samlp:SessionIndex>` : ''}</samlp:LogoutRequest>`;
  return redirectUrl(idp, 'SAMLRequest', xml, options);
}

/** The IdP's LogoutResponse to the SP's LogoutRequest `inResponseTo` (null leaves it out). */
export function buildLogoutResponseUrl(idp: TestSamlIdp, options: LogoutMessageOptions & { inResponseTo: string | null; status?: string }): string {
  const destination = options.destination === undefined ? options.spSloUrl : options.destination;
  const xml =
    `<samlp:LogoutResponse xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}" ID="${newId()}" Version="2.0" IssueInstant="${instant(options.issueInstant ?? new Date())}"` +
    `${destination === null ? '' : ` Destination="${xmlEscape(destination)}"`}${options.inResponseTo === null ? '' : ` InResponseTo="${xmlEscape(options.inResponseTo)}"`}>${options.comment ?? ''}` +
    `<saml:Issuer>${xmlEscape(options.issuer ?? idp.entityId)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="${xmlEscape(options.status ?? STATUS_SUCCESS)}"/></samlp:Status></samlp:LogoutResponse>`;
  return redirectUrl(idp, 'SAMLResponse', xml, options);
}

function redirectUrl(idp: TestSamlIdp, parameter: 'SAMLRequest' | 'SAMLResponse', xml: string, options: LogoutMessageOptions): string {
  let query = `${parameter}=${encodeURIComponent(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}`;
  if (options.relayState !== undefined) query += `&RelayState=${encodeURIComponent(options.relayState)}`;
  const sign = options.sign ?? 'sha256';
  if (sign !== 'none') {
    query += `&SigAlg=${encodeURIComponent(sign === 'sha1' ? RSA_SHA1_QUERY : RSA_SHA256_QUERY)}`;
    const signer = createSign(sign === 'sha1' ? 'RSA-SHA1' : 'RSA-SHA256');
    signer.update(query);
    query += `&Signature=${encodeURIComponent(signer.sign((options.key ?? { privateKeyPem: idp.privateKeyPem }).privateKeyPem, 'base64'))}`;
  }
  return `${options.spSloUrl}?${query}`;
}

/** Reads the SP's LogoutRequest or LogoutResponse from the URL it sent the browser to. */
export function parseLogoutRedirect(redirect: string): ParsedLogoutMessage {
  const url = new URL(redirect);
  const parameter = url.searchParams.has('SAMLRequest') ? 'SAMLRequest' : 'SAMLResponse';
  const xml = inflateRawSync(Buffer.from(url.searchParams.get(parameter) ?? '', 'base64')).toString('utf8');
  const root = parseSamlXml(xml).documentElement!;
  const nameId = firstChildElement(root, SAML_NS.assertion, 'NameID');
  const status = firstChildElement(root, SAML_NS.protocol, 'Status');
  const raw = url.search.slice(1).split('&');
  const token = (name: string) => raw.find((t) => t.startsWith(`${name}=`));
  return {
    kind: root.localName as ParsedLogoutMessage['kind'],
    id: root.getAttribute('ID') ?? '',
    issuer: firstChildElement(root, SAML_NS.assertion, 'Issuer')?.textContent ?? null,
    destination: root.getAttribute('Destination'),
    nameId: nameId?.textContent ?? null,
    nameIdFormat: nameId?.getAttribute('Format') ?? null,
    sessionIndex: firstChildElement(root, SAML_NS.protocol, 'SessionIndex')?.textContent ?? null,
    inResponseTo: root.getAttribute('InResponseTo'),
    statusCode: status ? (firstChildElement(status, SAML_NS.protocol, 'StatusCode')?.getAttribute('Value') ?? null) : null,
    relayState: url.searchParams.get('RelayState'),
    sigAlg: url.searchParams.get('SigAlg'),
    signedBy: (certificatePem: string) => {
      const signature = url.searchParams.get('Signature');
      if (!signature) return false;
      const signed = [token(parameter), token('RelayState'), token('SigAlg')].filter(Boolean).join('&');
      return createVerify('RSA-SHA256').update(signed).verify(certificatePem, signature, 'base64');
    },
  };
}

// ---------------------------------------------------------------- encrypted assertions

/**
 * Replaces the (signed) Assertion of a built response with an EncryptedAssertion for the SP's
 * certificate: AES-256-GCM content, RSA-OAEP key transport, as Entra ID and Okta send them. Sign
 * the assertion when building (the default) so the signature travels inside the encryption.
 */
export async function encryptAssertion(responseBase64: string, spCertificatePem: string): Promise<string> {
  // xml-encryption (node-saml's own decryption library) ships no type declarations.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { encrypt } = require('xml-encryption') as { encrypt: (content: string, options: Record<string, unknown>, done: (err: Error | null, result: string) => void) => void };
  const doc = decode(responseBase64);
  const response = doc.documentElement!;
  const assertion = requireChild(response, SAML_NS.assertion, 'Assertion');
  const publicKey = createPublicKey(spCertificatePem).export({ type: 'spki', format: 'pem' }) as string;
  const encrypted = await new Promise<string>((resolve, reject) =>
    encrypt(
      new XMLSerializer().serializeToString(assertion),
      {
        rsa_pub: publicKey,
        pem: spCertificatePem,
        encryptionAlgorithm: 'http://www.w3.org/2009/xmlenc11#aes256-gcm',
        keyEncryptionAlgorithm: 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p',
        disallowEncryptionWithInsecureAlgorithm: true,
        warnInsecureAlgorithm: false,
      },
      (err: Error | null, result: string) => (err ? reject(err) : resolve(result)),
    ),
  );
  const wrapper = doc.createElementNS(SAML_NS.assertion, 'saml:EncryptedAssertion');
  const data = parseSamlXml(encrypted).documentElement!;
  wrapper.appendChild(doc.importNode(data, true));
  response.replaceChild(wrapper, assertion);
  return encode(doc);
}
