import { AppException } from '../../../common/errors/app.exception';

export const ApiKeyErrors = {
  notFound: () => AppException.notFound('API key not found'),
  organizationNotFound: () => AppException.notFound('Organization not found'),
  userRequired: () => AppException.forbidden('forbidden', 'API keys are created by signed-in users, not by other API keys'),
  siteRestricted: () => AppException.forbidden('site_access_denied', 'A site-restricted account cannot create API keys, which reach every site'),
  privilegeEscalation: (permissions: string[]) =>
    AppException.forbidden('privilege_escalation', 'An API key cannot hold permissions beyond your own', { permissions }),
  partnerWideEscalation: () =>
    AppException.forbidden('privilege_escalation', 'Only a technician with access to every organization can create a partner-wide key'),
  expiryUnreadable: () => AppException.validation([{ field: 'expiresAt', message: 'expiresAt must be a calendar date and time, such as 2030-01-31T12:00:00Z' }]),
  expiryInPast: () => AppException.validation([{ field: 'expiresAt', message: 'expiresAt must be in the future' }]),
};
