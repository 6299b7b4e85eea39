import { AppException } from '../../../common/errors/app.exception';

export const ApprovalErrors = {
  notFound: () => AppException.notFound('Approval request not found'),
  mobileDeviceNotFound: () => AppException.notFound('Mobile device not found'),
  userRequired: () => AppException.forbidden('user_required', 'Only a signed-in user can do this, not an API key'),
  siteAccessDenied: () => AppException.forbidden('site_access_denied', 'You do not have access to this site'),
  selfApproval: () => AppException.forbidden('self_approval', 'You cannot approve a request you filed yourself'),
  alreadyDecided: (currentStatus: string) => AppException.conflict('already_decided', 'This elevation request has already been decided', { currentStatus }),
  expired: () => AppException.gone('expired', 'This approval request has expired'),
  tooManyDevices: (limit: number) => AppException.conflict('too_many_mobile_devices', `At most ${limit} phones can be registered per user; remove one first`, { limit }),
};
