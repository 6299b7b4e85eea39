import { ScimError } from './scim-error';
import { GROUP_SCHEMA, LIST_SCHEMA, MAX_PAGE, USER_SCHEMA } from './scim-resource.util';

export const ENTERPRISE_USER_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RT_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

export function serviceProviderConfig(base: string): Record<string, unknown> {
  return {
    schemas: [SPC_SCHEMA],
    documentationUri: 'docs/identity-lifecycle.md',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [{ type: 'oauthbearertoken', name: 'Bearer token', description: 'The connection token (scim_…) shown once when the connection is created or rotated', primary: true }],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

function list(resources: Record<string, unknown>[]): Record<string, unknown> {
  return { schemas: [LIST_SCHEMA], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources };
}

function resourceTypeList(base: string): Record<string, unknown>[] {
  const meta = (id: string) => ({ resourceType: 'ResourceType', location: `${base}/ResourceTypes/${id}` });
  return [
    {
      schemas: [RT_SCHEMA],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A person of the organization (or the partner\'s technicians)',
      schema: USER_SCHEMA,
      schemaExtensions: [{ schema: ENTERPRISE_USER_SCHEMA, required: false }],
      meta: meta('User'),
    },
    { schemas: [RT_SCHEMA], id: 'Group', name: 'Group', endpoint: '/Groups', description: 'A group of the IdP, mapped to roles', schema: GROUP_SCHEMA, meta: meta('Group') },
  ];
}

export function resourceTypes(base: string): Record<string, unknown> {
  return list(resourceTypeList(base));
}

/** RFC 7644 §4: one discovery entry by its id (404 as a SCIM error when none has it). */
function byId(entries: Record<string, unknown>[], id: string, what: string): Record<string, unknown> {
  const found = entries.find((e) => e.id === id);
  if (!found) throw ScimError.notFound(`No such ${what}`);
  return found;
}

export function resourceType(base: string, id: string): Record<string, unknown> {
  return byId(resourceTypeList(base), id, 'resource type');
}

const attr = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

function schemaList(base: string): Record<string, unknown>[] {
  const meta = (id: string) => ({ resourceType: 'Schema', location: `${base}/Schemas/${id}` });
  return [
    {
      schemas: [SCHEMA_SCHEMA],
      id: USER_SCHEMA,
      name: 'User',
      description: 'User account',
      attributes: [
        attr('userName', 'string', { required: true, uniqueness: 'server' }),
        attr('externalId', 'string', { caseExact: true }),
        attr('displayName', 'string'),
        attr('name', 'complex', { subAttributes: [attr('formatted', 'string'), attr('givenName', 'string'), attr('familyName', 'string')] }),
        attr('emails', 'complex', { multiValued: true, subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')] }),
        attr('active', 'boolean'),
      ],
      meta: meta(USER_SCHEMA),
    },
    {
      schemas: [SCHEMA_SCHEMA],
      id: GROUP_SCHEMA,
      name: 'Group',
      description: 'Group',
      attributes: [
        attr('displayName', 'string', { required: true, uniqueness: 'server' }),
        attr('externalId', 'string', { caseExact: true }),
        attr('members', 'complex', { multiValued: true, subAttributes: [attr('value', 'string', { mutability: 'immutable' }), attr('display', 'string', { mutability: 'readOnly' })] }),
      ],
      meta: meta(GROUP_SCHEMA),
    },
    {
      // Accepted on users and not kept: listed so that a client reading the schemas knows the extension is understood.
      schemas: [SCHEMA_SCHEMA],
      id: ENTERPRISE_USER_SCHEMA,
      name: 'EnterpriseUser',
      description: 'Enterprise user (accepted, not stored)',
      attributes: [
        attr('employeeNumber', 'string'),
        attr('costCenter', 'string'),
        attr('organization', 'string'),
        attr('division', 'string'),
        attr('department', 'string'),
        attr('manager', 'complex', { subAttributes: [attr('value', 'string'), attr('displayName', 'string', { mutability: 'readOnly' })] }),
      ],
      meta: meta(ENTERPRISE_USER_SCHEMA),
    },
  ];
}

export function schemas(base: string): Record<string, unknown> {
  return list(schemaList(base));
}

export function schema(base: string, urn: string): Record<string, unknown> {
  return byId(schemaList(base), urn, 'schema');
}
