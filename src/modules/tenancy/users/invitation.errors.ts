import { AppException } from '../../../common/errors/app.exception';

export const InvitationErrors = {
  notFound: () => AppException.notFound('Invitation not found'),
  userRequired: () => AppException.forbidden('user_required', 'Invitations are answered by the invited person, signed in, not by an API key'),
  technicianElsewhere: () => AppException.conflict('membership_exists', 'You are already a technician of a partner'),
};
