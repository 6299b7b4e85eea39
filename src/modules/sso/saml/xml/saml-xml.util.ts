import { X509Certificate } from 'node:crypto';
import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom';
import { SamlXmlError } from './saml-xml.errors';

export const SAML_NS = {
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const;

export const SAML_BINDING = {
  httpRedirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  httpPost: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
} as const;

export const NAMEID_FORMAT_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

const ELEMENT_NODE = 1;

/** Characters outside the XML 1.0 `Char` production cannot be escaped, only refused. */
const NON_XML_CHAR = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * Parses untrusted SAML XML (IdP metadata, responses, requests). Any DOCTYPE is refused before
 * parsing, so no entity can be declared or expanded (XXE, billion laughs), and every parser
 * warning is fatal: a document the parser had to repair is not one to trust.
 */
export function parseSamlXml(xml: string): Document {
  if (typeof xml !== 'string' || xml.trim() === '') {
    throw new SamlXmlError('malformed_xml', 'XML document is empty');
  }
  if (/<!DOCTYPE/i.test(xml)) {
    throw new SamlXmlError('doctype_forbidden', 'XML documents with a DOCTYPE are not accepted');
  }
  let doc: Document;
  try {
    doc = new DOMParser({
      onError: (level, message) => {
        throw new Error(`${level}: ${message}`);
      },
    }).parseFromString(xml, 'text/xml');
  } catch (err) {
    throw new SamlXmlError('malformed_xml', `XML is not well-formed (${firstLine(err)})`);
  }
  if (doc.doctype) {
    throw new SamlXmlError('doctype_forbidden', 'XML documents with a DOCTYPE are not accepted');
  }
  if (!doc.documentElement) {
    throw new SamlXmlError('malformed_xml', 'XML document has no root element');
  }
  return doc;
}

export function isElement(node: Node | null | undefined): node is Element {
  return !!node && node.nodeType === ELEMENT_NODE;
}

/** Direct children only: SAML meaning depends on position, so a descendant search would let wrapped copies count. */
export function childElements(parent: Element, namespace: string, localName: string): Element[] {
  const found: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    if (isElement(child) && child.namespaceURI === namespace && child.localName === localName) {
      found.push(child);
    }
  }
  return found;
}

export function firstChildElement(parent: Element, namespace: string, localName: string): Element | undefined {
  return childElements(parent, namespace, localName)[0];
}

/** Refuses values an XML serializer would emit verbatim into an invalid document. */
export function assertXmlText(value: string, field: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new SamlXmlError('invalid_input', `${field} must be a non-empty string`);
  }
  if (NON_XML_CHAR.test(value)) {
    throw new SamlXmlError('invalid_input', `${field} contains characters that XML cannot carry`);
  }
  return value;
}

/**
 * Turns the base64 body of a `ds:X509Certificate` into a PEM certificate, refusing anything that
 * is not a parseable X.509 certificate so a pasted typo fails at configuration time, not at login.
 */
export function certificateBodyToPem(body: string): string {
  const base64 = body.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
    throw new SamlXmlError('invalid_certificate', 'X509Certificate is not base64');
  }
  const pem = `-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
  } catch {
    throw new SamlXmlError('invalid_certificate', 'X509Certificate is not a valid X.509 certificate');
  }
  return pem;
}

/** The base64 body of a PEM certificate, as `ds:X509Certificate` carries it. */
export function pemToCertificateBody(pem: string): string {
  return pem
    .replace(/-----BEGIN CERTIFICATE-----/, '')
    .replace(/-----END CERTIFICATE-----/, '')
    .replace(/\s+/g, '');
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0].slice(0, 200);
}
