import { AppException } from '../../../common/errors/app.exception';

export const ActuationErrors = {
  disabled: () => AppException.forbidden('pam_actuator_disabled', 'The PAM actuator is not enabled on this service'),
  deviceNotFound: () => AppException.notFound('Device not found'),
  requestNotFound: () => AppException.notFound('Elevation request not found'),
  siteAccessDenied: () => AppException.forbidden('site_access_denied', 'You do not have access to this site'),
  deviceDecommissioned: () => AppException.badRequest('device_decommissioned', 'The device is decommissioned'),
  notActuatable: (flowType: string) =>
    AppException.badRequest('flow_not_actuatable', `Elevation requests of flow ${flowType} are not actuated on the device`, { flowType }),
  wrongStatus: (currentStatus: string) => AppException.conflict('wrong_status', 'Elevation request is not approved', { currentStatus }),
  raceLost: () => AppException.conflict('race_lost', 'Elevation request already being actuated'),
};
