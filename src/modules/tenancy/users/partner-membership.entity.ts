import { Column, Entity, PrimaryColumn } from 'typeorm';
import { CreatedAtColumns } from '../../../infra/database/entity-base';

/**
 * partner_memberships (migrations 1763700000000, 1763700930000): a technician of a partner; a user
 * is a technician of at most one partner (unique user_id). Visible to callers reaching the partner
 * and to the technician; written only by the repositories of tenancy/users.
 */
@Entity({ name: 'partner_memberships' })
export class PartnerMembershipEntity extends CreatedAtColumns {
  @PrimaryColumn({ name: 'partner_id', type: 'uuid' })
  partnerId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'role_id', type: 'uuid' })
  roleId: string;

  /** all: every organization of the partner, present and future; selected: those in partner_membership_orgs. */
  @Column({ name: 'org_access', type: 'varchar', length: 16 })
  orgAccess: 'all' | 'selected';

  /** true: the technician reaches only the sites listed in partner_membership_sites. */
  @Column({ name: 'site_restricted', type: 'boolean' })
  siteRestricted: boolean;

  /** Set by deprovisioning: the membership keeps its role but grants nothing until reactivated. */
  @Column({ name: 'suspended_at', type: 'timestamptz', nullable: true })
  suspendedAt: Date | null;
}

/** partner_membership_orgs (migration 1763700000000): the organizations of a technician with `selected` access. */
@Entity({ name: 'partner_membership_orgs' })
export class PartnerMembershipOrgEntity {
  @PrimaryColumn({ name: 'partner_id', type: 'uuid' })
  partnerId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @PrimaryColumn({ name: 'org_id', type: 'uuid' })
  orgId: string;
}

/** partner_membership_sites (migration 1763700000000): the sites of a site-restricted technician, with their organization. */
@Entity({ name: 'partner_membership_sites' })
export class PartnerMembershipSiteEntity {
  @PrimaryColumn({ name: 'partner_id', type: 'uuid' })
  partnerId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @PrimaryColumn({ name: 'site_id', type: 'uuid' })
  siteId: string;
}
