import { AppException } from '../../common/errors/app.exception';

export const TenancyErrors = {
  organizationNotFound: () => AppException.notFound('Organization not found'),
  partnerRequired: () => AppException.forbidden('partner_scope_required', 'Only a partner-scope session can create organizations'),
};
