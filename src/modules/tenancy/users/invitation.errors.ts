import { AppException } from '../../../common/errors/app.exception';

export const InvitationErrors = {
  notFound: () => AppException.notFound('Invitation not found'),
  userRequired: () => AppException.forbidden('user_required', 'Invitations are answered by the invited person, signed in, not by an API key'),
  inviterNoLongerEntitled: () =>
    AppException.conflict('invitation_stale', 'The person who invited you can no longer grant this role or these sites; ask them or another administrator for a new invitation'),
  technicianElsewhere: () => AppException.conflict('membership_exists', 'You are already a technician of a partner'),
};
