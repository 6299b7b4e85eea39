import { Column, Entity } from 'typeorm';
import { IdCreatedEntity } from '../../../infra/database/entity-base';

/**
 * membership_invitations (migration 1763700720000): a membership offered to an existing identity
 * the inviting tenant cannot see, granted only when its owner accepts. Either an organization
 * invitation (orgId, no orgAccess) or a partner one (partnerId, orgAccess, orgIds when selected):
 * a CHECK says so. Visible to the inviting tenant and to the invitee; written only by the
 * repositories of tenancy/users (the invitee's answers in system context).
 */
@Entity({ name: 'membership_invitations' })
export class MembershipInvitationEntity extends IdCreatedEntity {
  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  @Column({ name: 'role_id', type: 'uuid' })
  roleId: string;

  @Column({ name: 'org_access', type: 'varchar', length: 16, nullable: true })
  orgAccess: 'all' | 'selected' | null;

  /** The organizations of a `selected` partner invitation, as written (some may be gone by acceptance). */
  @Column({ name: 'org_ids', type: 'uuid', array: true, nullable: true })
  orgIds: string[] | null;

  /** null: every site; otherwise the sites as written (some may be gone by acceptance). */
  @Column({ name: 'site_ids', type: 'uuid', array: true, nullable: true })
  siteIds: string[] | null;

  /** What the inviting tenant wrote: it sees the invited identity with this email and name, never the account's own. */
  @Column({ type: 'varchar', length: 255 })
  email: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ name: 'invited_by', type: 'uuid', nullable: true })
  invitedBy: string | null;
}
