import type { DateTime, Uuid } from '../../../common/openapi/formats';
export class InvitationDto {
  id: Uuid;
  /** The organization of an organization membership; null for a technician invitation. */
  orgId: Uuid | null;
  organizationName: string | null;
  /** The partner of a technician invitation; null for an organization membership. */
  partnerId: Uuid | null;
  partnerName: string | null;
  createdAt: DateTime;
}

export class InvitationListDto {
  success: true;
  invitations: InvitationDto[];
}
