import { DOMImplementation, XMLSerializer, type Element } from '@xmldom/xmldom';
import { SamlXmlError } from './saml-xml.errors';
import {
  NAMEID_FORMAT_EMAIL,
  SAML_BINDING,
  SAML_NS,
  XML_DECLARATION,
  assertXmlText,
  certificateBodyToPem,
  childElements,
  firstChildElement,
  parseSamlXml,
  pemToCertificateBody,
} from './saml-xml.util';

export interface SpMetadataInput {
  entityId: string;
  /** Absolute URL of the HTTP-POST assertion consumer service. */
  acsUrl: string;
  /** Defaults to the emailAddress format the spec fixes for the SP. */
  nameIdFormat?: string;
  /** Defaults to true: the SP only trusts signed assertions. */
  wantAssertionsSigned?: boolean;
  /** Defaults to false: AuthnRequests are sent unsigned over HTTP-Redirect. */
  authnRequestsSigned?: boolean;
  /** The SP's own certificates: the current key signs logout messages and receives encrypted assertions; a previous one, during its overlap, only the latter. */
  keys?: { certificatePem: string; uses: ('signing' | 'encryption')[] }[];
  /** Absolute URL of the HTTP-Redirect SingleLogoutService. */
  singleLogoutUrl?: string;
}

export interface IdpMetadata {
  entityId: string;
  /** Location of the HTTP-Redirect SingleSignOnService, the binding AuthnRequests are sent with. */
  ssoUrl: string;
  /** PEM certificates of every signing key (KeyDescriptor use="signing" or without use), in document order. */
  certificates: string[];
}

const SAML2_PROTOCOL = SAML_NS.protocol;

/**
 * SP metadata for one provider. Built through the DOM so that every configured value is escaped
 * by the serializer; a value XML cannot carry at all is refused.
 */
export function buildSpMetadata(input: SpMetadataInput): string {
  const entityId = assertXmlText(input.entityId, 'entityId');
  const acsUrl = assertAbsoluteHttpUrl(input.acsUrl, 'acsUrl');
  const nameIdFormat = assertXmlText(input.nameIdFormat ?? NAMEID_FORMAT_EMAIL, 'nameIdFormat');

  const doc = new DOMImplementation().createDocument(SAML_NS.metadata, 'md:EntityDescriptor', null);
  const root = doc.documentElement!;
  root.setAttribute('entityID', entityId);

  const sp = doc.createElementNS(SAML_NS.metadata, 'md:SPSSODescriptor');
  sp.setAttribute('AuthnRequestsSigned', String(input.authnRequestsSigned ?? false));
  sp.setAttribute('WantAssertionsSigned', String(input.wantAssertionsSigned ?? true));
  sp.setAttribute('protocolSupportEnumeration', SAML2_PROTOCOL);
  root.appendChild(sp);

  // Schema order of an SPSSODescriptor: KeyDescriptor, SingleLogoutService, NameIDFormat, AssertionConsumerService.
  for (const key of input.keys ?? []) {
    const body = pemToCertificateBody(key.certificatePem);
    for (const use of key.uses) {
      const descriptor = doc.createElementNS(SAML_NS.metadata, 'md:KeyDescriptor');
      descriptor.setAttribute('use', use);
      const info = doc.createElementNS(SAML_NS.dsig, 'ds:KeyInfo');
      const data = doc.createElementNS(SAML_NS.dsig, 'ds:X509Data');
      const cert = doc.createElementNS(SAML_NS.dsig, 'ds:X509Certificate');
      cert.appendChild(doc.createTextNode(body));
      data.appendChild(cert);
      info.appendChild(data);
      descriptor.appendChild(info);
      sp.appendChild(descriptor);
    }
  }
  if (input.singleLogoutUrl !== undefined) {
    const slo = doc.createElementNS(SAML_NS.metadata, 'md:SingleLogoutService');
    slo.setAttribute('Binding', SAML_BINDING.httpRedirect);
    slo.setAttribute('Location', assertAbsoluteHttpUrl(input.singleLogoutUrl, 'singleLogoutUrl'));
    sp.appendChild(slo);
  }

  const format = doc.createElementNS(SAML_NS.metadata, 'md:NameIDFormat');
  format.appendChild(doc.createTextNode(nameIdFormat));
  sp.appendChild(format);

  const acs = doc.createElementNS(SAML_NS.metadata, 'md:AssertionConsumerService');
  acs.setAttribute('Binding', SAML_BINDING.httpPost);
  acs.setAttribute('Location', acsUrl);
  acs.setAttribute('index', '0');
  acs.setAttribute('isDefault', 'true');
  sp.appendChild(acs);

  return `${XML_DECLARATION}\n${new XMLSerializer().serializeToString(doc)}`;
}

/**
 * Reads what the SP needs from IdP metadata: the entity id (checked later as the response
 * Issuer), the HTTP-Redirect SSO location and every signing certificate, so that an IdP
 * publishing its next key during a rotation keeps working.
 * Accepts an EntityDescriptor, or an EntitiesDescriptor holding exactly one IdP.
 */
export function parseIdpMetadata(xml: string): IdpMetadata {
  const root = parseSamlXml(xml).documentElement!;
  const entity = selectIdpEntity(root);

  const entityId = entity.getAttribute('entityID')?.trim();
  if (!entityId) {
    throw new SamlXmlError('missing_entity_id', 'IdP metadata has no entityID');
  }

  const idp = childElements(entity, SAML_NS.metadata, 'IDPSSODescriptor').find(supportsSaml2);
  if (!idp) {
    throw new SamlXmlError('not_idp_metadata', 'IdP metadata has no SAML 2.0 IDPSSODescriptor');
  }

  const redirect = childElements(idp, SAML_NS.metadata, 'SingleSignOnService').find(
    (service) => service.getAttribute('Binding') === SAML_BINDING.httpRedirect,
  );
  const location = redirect?.getAttribute('Location')?.trim();
  if (!location) {
    throw new SamlXmlError('missing_sso_url', 'IdP metadata has no HTTP-Redirect SingleSignOnService location');
  }
  const ssoUrl = assertAbsoluteHttpUrl(location, 'SingleSignOnService Location', 'missing_sso_url');

  const certificates: string[] = [];
  for (const keyDescriptor of childElements(idp, SAML_NS.metadata, 'KeyDescriptor')) {
    const use = keyDescriptor.getAttribute('use');
    if (use && use !== 'signing') {
      continue;
    }
    for (const body of x509CertificateBodies(keyDescriptor)) {
      const pem = certificateBodyToPem(body);
      if (!certificates.includes(pem)) {
        certificates.push(pem);
      }
    }
  }
  if (certificates.length === 0) {
    throw new SamlXmlError('missing_signing_certificate', 'IdP metadata has no signing certificate');
  }

  return { entityId, ssoUrl, certificates };
}

function selectIdpEntity(root: Element): Element {
  if (root.namespaceURI === SAML_NS.metadata && root.localName === 'EntityDescriptor') {
    return root;
  }
  if (root.namespaceURI === SAML_NS.metadata && root.localName === 'EntitiesDescriptor') {
    const idps = childElements(root, SAML_NS.metadata, 'EntityDescriptor').filter(
      (entity) => childElements(entity, SAML_NS.metadata, 'IDPSSODescriptor').length > 0,
    );
    if (idps.length === 1) {
      return idps[0];
    }
    throw new SamlXmlError(
      'not_idp_metadata',
      `IdP metadata aggregate must describe exactly one IdP, found ${idps.length}`,
    );
  }
  throw new SamlXmlError('not_idp_metadata', 'XML is not SAML 2.0 metadata (no md:EntityDescriptor root)');
}

function supportsSaml2(descriptor: Element): boolean {
  return (descriptor.getAttribute('protocolSupportEnumeration') ?? '').split(/\s+/).includes(SAML2_PROTOCOL);
}

function x509CertificateBodies(keyDescriptor: Element): string[] {
  const keyInfo = firstChildElement(keyDescriptor, SAML_NS.dsig, 'KeyInfo');
  if (!keyInfo) {
    return [];
  }
  return childElements(keyInfo, SAML_NS.dsig, 'X509Data')
    .flatMap((data) => childElements(data, SAML_NS.dsig, 'X509Certificate'))
    .map((cert) => cert.textContent ?? '')
    .filter((body) => body.trim() !== '');
}

function assertAbsoluteHttpUrl(
  value: string,
  field: string,
  code: 'invalid_input' | 'missing_sso_url' = 'invalid_input',
): string {
  assertXmlText(value, field);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SamlXmlError(code, `${field} is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SamlXmlError(code, `${field} must be an http(s) URL`);
  }
  return value;
}
