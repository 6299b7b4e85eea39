import { Column, Entity, PrimaryColumn } from 'typeorm';
import { CreatedAtColumns } from '../../../infra/database/entity-base';

/**
 * organization_memberships (migrations 1763700000000, 1763700930000): a user's role in one
 * organization, keyed by both. Visible to callers reaching the organization and to the member;
 * written only by the repositories of tenancy/users. A composite foreign key keeps the role within
 * the organization.
 */
@Entity({ name: 'organization_memberships' })
export class OrganizationMembershipEntity extends CreatedAtColumns {
  @PrimaryColumn({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ name: 'role_id', type: 'uuid' })
  roleId: string;

  /** true: the member reaches only the sites listed in organization_membership_sites. */
  @Column({ name: 'site_restricted', type: 'boolean' })
  siteRestricted: boolean;

  /** Set by deprovisioning: the membership keeps its role but grants nothing until reactivated. */
  @Column({ name: 'suspended_at', type: 'timestamptz', nullable: true })
  suspendedAt: Date | null;
}

/** organization_membership_sites (migration 1763700000000): the sites of a site-restricted organization membership. */
@Entity({ name: 'organization_membership_sites' })
export class OrganizationMembershipSiteEntity {
  @PrimaryColumn({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @PrimaryColumn({ name: 'site_id', type: 'uuid' })
  siteId: string;
}
