import { CLAIMS_2005, CLAIMS_2008_GROUPS, mapSamlFields, NAMEID_FORMAT_TRANSIENT, NAMEID_FORMAT_UNSPECIFIED, samlExternalId, samlIdentity } from './saml-attributes.util';
import { NAMEID_FORMAT_EMAIL } from './xml/saml-xml.util';

const DEFAULT_MAPPING = { email: 'email', name: 'name' };
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

describe('mapSamlFields', () => {
  it.each([
    [`${CLAIMS_2005}/emailaddress`, 'email', 'ann@corp.example'],
    ['urn:oid:0.9.2342.19200300.100.1.3', 'email', 'ann@corp.example'],
    [`${CLAIMS_2005}/name`, 'name', 'Ann Example'],
    ['urn:oid:2.16.840.1.113730.3.1.241', 'name', 'Ann Example'],
    [`${CLAIMS_2005}/givenname`, 'firstName', 'Ann'],
    ['urn:oid:2.5.4.42', 'firstName', 'Ann'],
    [`${CLAIMS_2005}/surname`, 'lastName', 'Example'],
    ['urn:oid:2.5.4.4', 'lastName', 'Example'],
  ] as const)('maps the spec table attribute %s to %s', (attribute, field, value) => {
    const fields = mapSamlFields({ nameId: 'opaque-id', nameIdFormat: PERSISTENT, attributes: { [attribute]: [value] } }, DEFAULT_MAPPING);
    expect(fields[field]).toBe(value);
  });

  it('keeps every value of the groups attribute, in order, without duplicates', () => {
    const fields = mapSamlFields({ nameId: 'x', nameIdFormat: PERSISTENT, attributes: { [CLAIMS_2008_GROUPS]: ['admins', 'staff', 'admins', 'vpn'] } }, DEFAULT_MAPPING);
    expect(fields.groups).toEqual(['admins', 'staff', 'vpn']);
  });

  it("prefers the provider's own attribute over the spec table", () => {
    const fields = mapSamlFields(
      { nameId: 'x', nameIdFormat: PERSISTENT, attributes: { 'User.email': ['own@corp.example'], [`${CLAIMS_2005}/emailaddress`]: ['table@corp.example'], memberOf: ['a', 'b'] } },
      { email: 'User.email', name: 'User.name', groups: 'memberOf' },
    );
    expect(fields.email).toBe('own@corp.example');
    expect(fields.groups).toEqual(['a', 'b']);
  });

  it('falls back to the spec table when the mapped attribute is absent', () => {
    const fields = mapSamlFields({ nameId: 'x', nameIdFormat: PERSISTENT, attributes: { 'urn:oid:0.9.2342.19200300.100.1.3': ['oid@corp.example'] } }, { email: 'User.email', name: 'n' });
    expect(fields.email).toBe('oid@corp.example');
  });

  it('takes the email from an emailAddress NameID when no attribute carries one', () => {
    expect(mapSamlFields({ nameId: 'ann@corp.example', nameIdFormat: NAMEID_FORMAT_EMAIL, attributes: {} }, DEFAULT_MAPPING).email).toBe('ann@corp.example');
  });

  it('takes the email from an unspecified NameID only when it reads as an address', () => {
    expect(mapSamlFields({ nameId: 'ann@corp.example', nameIdFormat: NAMEID_FORMAT_UNSPECIFIED, attributes: {} }, DEFAULT_MAPPING).email).toBe('ann@corp.example');
    expect(mapSamlFields({ nameId: 'ann', nameIdFormat: null, attributes: {} }, DEFAULT_MAPPING).email).toBeNull();
  });

  it('never reads a persistent NameID as the email, even one shaped like an address', () => {
    expect(mapSamlFields({ nameId: 'ann@corp.example', nameIdFormat: PERSISTENT, attributes: {} }, DEFAULT_MAPPING).email).toBeNull();
  });
});

describe('samlIdentity', () => {
  const base = { email: 'ann@Corp.Example', name: null, firstName: null, lastName: null, groups: [] };

  it('builds the display name from first and last name when no name is given, and the domain in lower case', () => {
    expect(samlIdentity({ ...base, firstName: 'Ann', lastName: 'Example' })).toEqual({
      email: 'ann@Corp.Example',
      domain: 'corp.example',
      name: 'Ann Example',
      groups: [],
      emailVerification: 'unknown',
    });
  });

  it('falls back to the local part of the email for the name', () => {
    expect(samlIdentity(base)).toMatchObject({ name: 'ann' });
  });

  it('refuses an assertion without an email and one whose email is not an address', () => {
    expect(samlIdentity({ ...base, email: null })).toBe('email_attribute_missing');
    expect(samlIdentity({ ...base, email: 'a@b@corp.example' })).toBe('email_attribute_invalid');
    expect(samlIdentity({ ...base, email: 'not-an-email' })).toBe('email_attribute_invalid');
  });

  it('reports the email verification as unknown, whatever the IdP sent', () => {
    expect(samlIdentity(base)).toMatchObject({ emailVerification: 'unknown' });
  });
});

describe('samlExternalId', () => {
  const identity = { email: 'Ann@corp.example', domain: 'corp.example', name: 'Ann', groups: [], emailVerification: 'unknown' as const };

  it('is the NameID for a stable NameID format', () => {
    expect(samlExternalId({ nameId: 'abc-123', nameIdFormat: PERSISTENT, attributes: {} }, identity)).toBe('abc-123');
  });

  it('is the lower-cased email for a transient NameID, which changes at every sign-in', () => {
    expect(samlExternalId({ nameId: '_tr4nsient', nameIdFormat: NAMEID_FORMAT_TRANSIENT, attributes: {} }, identity)).toBe('ann@corp.example');
  });
});
