import { AppException } from '../../common/errors/app.exception';
import { CommonErrors } from '../../common/errors/common.errors';

/** Error codes of the SSO administration routes (error body of docs/api-conventions.md). */
export const SsoErrors = {
  providerNotFound: () => AppException.notFound('SSO provider not found'),
  organizationNotFound: () => AppException.notFound('Organization not found'),
  domainNotFound: () => AppException.notFound('Domain not found'),
  partnerScopeRequired: (what: string) => AppException.forbidden('partner_scope_required', `${what} needs a partner-scope session`),
  orgIdRequired: () => CommonErrors.orgIdRequired(),
  invalidDefaultRole: (reason: string) => AppException.badRequest('invalid_default_role', reason),
  privilegeEscalation: (permissions: string[]) =>
    AppException.forbidden('privilege_escalation', 'The default role grants permissions you do not hold yourself', { permissions }),
  providerIncomplete: (missing: string[]) =>
    AppException.badRequest('provider_incomplete', 'The provider cannot complete a sign-in yet, so it cannot be active or enforce SSO', { missing }),
  discoveryFailed: (reason: string, message: string, endpoint?: string) =>
    AppException.badRequest('discovery_failed', message, endpoint ? { reason, endpoint } : { reason }),
  invalidEndpoint: (field: string, reason: string, message: string) => AppException.badRequest('invalid_endpoint', message, { field, reason }),
  providerChanged: () => AppException.conflict('provider_changed', 'The provider was changed meanwhile; reload it and try again'),
  domainAlreadyClaimed: () => AppException.conflict('domain_already_claimed', 'This organization has already claimed that domain'),
  domainVerificationFailed: (reason: 'record_missing' | 'dns_unavailable', recordName: string, recordValue: string) =>
    AppException.badRequest(
      'domain_verification_failed',
      reason === 'record_missing'
        ? 'The TXT record was not found; publish it and try again (DNS changes can take a while to appear)'
        : 'DNS did not answer in time; try again later',
      { reason, recordName, recordValue },
    ),
};
