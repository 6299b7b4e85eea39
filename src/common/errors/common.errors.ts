import { AppException } from './app.exception';

/** The one wording, across modules, of a request that must name an organization and does not. */
export const ORG_ID_REQUIRED = 'orgId is required: a partner-scope caller must name the organization';

/** Errors more than one module raises, worded once. */
export const CommonErrors = {
  /** A partner-scope caller reaches several organizations, so a request about one must name it. */
  orgIdRequired: () => AppException.validation([{ field: 'orgId', message: ORG_ID_REQUIRED }]),
  /** An organization outside the caller's reach: answered as not found, like any other tenant's id. */
  organizationNotFound: () => AppException.notFound('Organization not found'),
  siteAccessDenied: () => AppException.forbidden('site_access_denied', 'You do not have access to this site'),
};
