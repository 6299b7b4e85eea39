import { AppException } from '../../common/errors/app.exception';

export const ScimAdminErrors = {
  notFound: () => AppException.notFound('SCIM connection not found'),
  providerNotFound: () => AppException.notFound('SSO provider not found'),
  organizationNotFound: () => AppException.notFound('Organization not found'),
  personRequired: () => AppException.forbidden('forbidden', 'SCIM connections and group mappings are configured by a signed-in person, not by an API key'),
  siteRestricted: () => AppException.forbidden('site_access_denied', 'A site-restricted account cannot configure provisioning, which reaches every site'),
  partnerScopeRequired: () => AppException.forbidden('partner_scope_required', 'A partner connection needs a partner-scope session'),
  orgIdRequired: () => AppException.validation([{ field: 'orgId', message: 'orgId is required for a partner-scope session' }]),
  scopeConflict: () => AppException.validation([{ field: 'scope', message: 'scope=partner cannot be combined with orgId' }]),
  invalidRole: (field: string) => AppException.badRequest('invalid_default_role', `${field} must be a role of the connection's owner, of the owner's scope`),
  invalidSites: () => AppException.validation([{ field: 'siteIds', message: 'siteIds must be sites of the organization (and are not available for partner owners)' }]),
  privilegeEscalation: (permissions: string[]) => AppException.forbidden('privilege_escalation', 'You can only map groups to roles whose permissions you hold yourself', { permissions }),
  revoked: () => AppException.conflict('scim_connection_revoked', 'The connection is revoked; create a new one'),
};
