import { AppException } from '../../common/errors/app.exception';

export const BrandingErrors = {
  partnerRequired: () => AppException.forbidden('partner_scope_required', 'This route needs a partner-scope session'),
  /** The table's CHECKs refused what the API let through: answered as a validation failure, never a 500. */
  rejectedByDatabase: () =>
    AppException.validation([{ field: 'branding', message: 'The branding does not satisfy the stored constraints' }]),
};
