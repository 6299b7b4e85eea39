import { GROUP_SCHEMA, LIST_SCHEMA, MAX_PAGE, USER_SCHEMA } from './scim.service';

const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RT_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

export function serviceProviderConfig(): Record<string, unknown> {
  return {
    schemas: [SPC_SCHEMA],
    documentationUri: 'docs/identity-lifecycle.md',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [{ type: 'oauthbearertoken', name: 'Bearer token', description: 'The connection token (scim_…) shown once when the connection is created or rotated', primary: true }],
    meta: { resourceType: 'ServiceProviderConfig' },
  };
}

function list(resources: Record<string, unknown>[]): Record<string, unknown> {
  return { schemas: [LIST_SCHEMA], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources };
}

export function resourceTypes(): Record<string, unknown> {
  return list([
    { schemas: [RT_SCHEMA], id: 'User', name: 'User', endpoint: '/Users', schema: USER_SCHEMA, meta: { resourceType: 'ResourceType' } },
    { schemas: [RT_SCHEMA], id: 'Group', name: 'Group', endpoint: '/Groups', schema: GROUP_SCHEMA, meta: { resourceType: 'ResourceType' } },
  ]);
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

export function schemas(): Record<string, unknown> {
  return list([
    {
      schemas: [SCHEMA_SCHEMA],
      id: USER_SCHEMA,
      name: 'User',
      attributes: [
        attr('userName', 'string', { required: true, uniqueness: 'server' }),
        attr('externalId', 'string', { caseExact: true }),
        attr('displayName', 'string'),
        attr('name', 'complex', { subAttributes: [attr('formatted', 'string'), attr('givenName', 'string'), attr('familyName', 'string')] }),
        attr('emails', 'complex', { multiValued: true, subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')] }),
        attr('active', 'boolean'),
      ],
      meta: { resourceType: 'Schema' },
    },
    {
      schemas: [SCHEMA_SCHEMA],
      id: GROUP_SCHEMA,
      name: 'Group',
      attributes: [
        attr('displayName', 'string', { required: true, uniqueness: 'server' }),
        attr('externalId', 'string', { caseExact: true }),
        attr('members', 'complex', { multiValued: true, subAttributes: [attr('value', 'string', { mutability: 'immutable' }), attr('display', 'string', { mutability: 'readOnly' })] }),
      ],
      meta: { resourceType: 'Schema' },
    },
  ]);
}
