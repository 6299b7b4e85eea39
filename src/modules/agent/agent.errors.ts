import { AppException } from '../../common/errors/app.exception';

export const AgentErrors = {
  /** The agent's credential is valid but its device is retired: it may not act for the device any more. */
  deviceDecommissioned: () => AppException.forbidden('device_decommissioned', 'The device is decommissioned'),
  deviceNotFound: () => AppException.unauthenticated('Invalid agent credentials'),
  rateLimited: (retryAfter: number) => new AppException(429, 'rate_limited', 'Too many elevation requests from this device, slow down', { retryAfter }),
};
