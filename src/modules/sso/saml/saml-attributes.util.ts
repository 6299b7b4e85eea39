import type { MappedIdentity } from '../login/oidc-claims.util';
import { domainOf } from '../../../infra/net/domain.util';
import type { AttributeMapping } from '../providers/sso-provider.types';
import { NAMEID_FORMAT_EMAIL } from './xml/saml-xml.util';

export const CLAIMS_2005 = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
export const CLAIMS_2008_GROUPS = 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups';
export const NAMEID_FORMAT_UNSPECIFIED = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';
export const NAMEID_FORMAT_TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';

export type SamlUserField = 'email' | 'name' | 'firstName' | 'lastName' | 'groups';

/**
 * Spec 1.10, second table: the attribute names every SAML provider understands, per user
 * field, in the order they are tried after the provider's own attributeMapping.
 */
export const SAML_ATTRIBUTE_TABLE: Readonly<Record<SamlUserField, readonly string[]>> = {
  email: [`${CLAIMS_2005}/emailaddress`, 'urn:oid:0.9.2342.19200300.100.1.3'],
  name: [`${CLAIMS_2005}/name`, 'urn:oid:2.16.840.1.113730.3.1.241'],
  firstName: [`${CLAIMS_2005}/givenname`, 'urn:oid:2.5.4.42'],
  lastName: [`${CLAIMS_2005}/surname`, 'urn:oid:2.5.4.4'],
  groups: [CLAIMS_2008_GROUPS],
};

/** The user fields read from one assertion, before they become an account. */
export interface SamlMappedFields {
  email: string | null;
  name: string | null;
  firstName: string | null;
  lastName: string | null;
  /** Every value of the groups attribute, in the IdP's order, duplicates dropped. */
  groups: string[];
}

export interface SamlSubject {
  nameId: string;
  nameIdFormat: string | null;
  /** Attribute name → every non-empty value, from all AttributeStatements. */
  attributes: Record<string, string[]>;
}

export type SamlMappingFailure = 'email_attribute_missing' | 'email_attribute_invalid';

const MAX_EMAIL = 255;
const MAX_NAME = 255;

/**
 * The values of the first attribute that has any: the provider's own mapping first (an
 * administrator's explicit choice), then the spec's table.
 */
function valuesFor(field: SamlUserField, attributes: Record<string, string[]>, mapping: AttributeMapping): string[] {
  const candidates = [mapping[field], ...SAML_ATTRIBUTE_TABLE[field]].filter((name): name is string => !!name);
  for (const name of candidates) {
    const values = Object.prototype.hasOwnProperty.call(attributes, name) ? attributes[name] : [];
    if (values.length > 0) return values;
  }
  return [];
}

/** Reads the user fields of an assertion; single-valued fields take the attribute's first value. */
export function mapSamlFields(subject: SamlSubject, mapping: AttributeMapping): SamlMappedFields {
  const first = (field: SamlUserField) => valuesFor(field, subject.attributes, mapping)[0] ?? null;
  let email = first('email');
  // An emailAddress NameID (what the SP asks for) is the email when no attribute names one;
  // an unspecified one only when it reads as an address.
  if (email === null && (subject.nameIdFormat === NAMEID_FORMAT_EMAIL || ((subject.nameIdFormat ?? NAMEID_FORMAT_UNSPECIFIED) === NAMEID_FORMAT_UNSPECIFIED && domainOf(subject.nameId)))) {
    email = subject.nameId;
  }
  return {
    email,
    name: first('name'),
    firstName: first('firstName'),
    lastName: first('lastName'),
    groups: [...new Set(valuesFor('groups', subject.attributes, mapping))],
  };
}

/**
 * The identity the account resolution works on (the OIDC flow's shape). SAML has no
 * standard "email verified" statement, so verification is always unknown: first-time
 * matching and provisioning then need the organization's DNS-verified domain (spec 1.2.2).
 */
export function samlIdentity(fields: SamlMappedFields): MappedIdentity | SamlMappingFailure {
  const email = fields.email;
  if (!email) return 'email_attribute_missing';
  const domain = domainOf(email);
  if (!domain || email.length > MAX_EMAIL || email.indexOf('@') !== email.lastIndexOf('@')) return 'email_attribute_invalid';
  const fromParts = [fields.firstName, fields.lastName].filter(Boolean).join(' ');
  const name = fields.name ?? (fromParts || email.slice(0, email.indexOf('@')));
  return { email, domain, name: name.slice(0, MAX_NAME), groups: fields.groups, emailVerification: 'unknown' };
}

/**
 * The identity's external id: the NameID, except a transient one, which changes at every
 * sign-in and would leave a new link each time; the email stands in for it then.
 */
export function samlExternalId(subject: SamlSubject, identity: MappedIdentity): string {
  return subject.nameIdFormat === NAMEID_FORMAT_TRANSIENT ? identity.email.toLowerCase() : subject.nameId;
}
