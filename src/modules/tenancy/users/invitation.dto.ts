export class InvitationDto {
  id: string;
  /** The organization of an organization membership; null for a technician invitation. */
  orgId: string | null;
  organizationName: string | null;
  /** The partner of a technician invitation; null for an organization membership. */
  partnerId: string | null;
  partnerName: string | null;
  createdAt: string;
}

export class InvitationListDto {
  success: true;
  invitations: InvitationDto[];
}
