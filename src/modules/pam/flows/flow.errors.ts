import { AppException } from '../../../common/errors/app.exception';

export const FlowErrors = {
  deviceNotFound: () => AppException.notFound('Device not found'),
  siteAccessDenied: () => AppException.forbidden('site_access_denied', 'You do not have access to this site'),
  deviceDecommissioned: () => AppException.badRequest('device_decommissioned', 'The device is decommissioned'),
  userRequired: () => AppException.forbidden('user_required', 'A just-in-time admin request must be made by a signed-in user, not an API key'),
  invalidInput: (message: string) => AppException.validation([{ field: 'input', message }]),
};
