import { AppException } from '../../../common/errors/app.exception';
import type { ElevationStatus } from './elevation-request.types';

export const ElevationRequestErrors = {
  notFound: () => AppException.notFound('Elevation request not found'),
  siteAccessDenied: () => AppException.forbidden('site_access_denied', 'You do not have access to this site'),
  selfApproval: () => AppException.forbidden('self_approval', 'You cannot approve a request you filed yourself'),
  notPending: (currentStatus: ElevationStatus) =>
    AppException.conflict('not_pending', 'Elevation request is no longer pending', { currentStatus }),
  notActive: (currentStatus: ElevationStatus) => AppException.conflict('not_active', 'Elevation is not active', { currentStatus }),
  invalidRange: () => AppException.validation([{ field: 'to', message: 'to must not be earlier than from' }]),
};
