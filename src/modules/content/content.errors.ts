import { AppException } from '../../common/errors/app.exception';

/** Errors shared by the content features (contacts, custom fields, scripts) and policies. */
export const ContentErrors = {
  invalidField: (field: string, message: string) => AppException.validation([{ field, message }]),
  partnerScopeRequired: (what: string) => AppException.forbidden('partner_scope_required', `${what} needs a partner-scope session`),
  deviceNotFound: () => AppException.notFound('Device not found'),
};
