import { Column, Entity } from 'typeorm';
import { IdCreatedEntity } from '../../infra/database/entity-base';

/**
 * group_role_mappings (migration 1763700930000): one (IdP group → role [+ sites]) mapping of an
 * SSO provider or of a SCIM connection (exactly one is set), owned by an organization or a partner
 * (exactly one is set); `position` orders a list, which is replaced as a whole. Written only by
 * ScimConnectionRepository; the sign-in and provisioning read (GroupRoleApplier) stays SQL.
 */
@Entity({ name: 'group_role_mappings' })
export class GroupRoleMappingEntity extends IdCreatedEntity {
  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  @Column({ name: 'provider_id', type: 'uuid', nullable: true })
  providerId: string | null;

  @Column({ name: 'connection_id', type: 'uuid', nullable: true })
  connectionId: string | null;

  /** 0-based place in its list; the first mapping whose group the user is in applies. */
  @Column({ type: 'int' })
  position: number;

  @Column({ name: 'idp_group', type: 'varchar', length: 255 })
  idpGroup: string;

  @Column({ name: 'role_id', type: 'uuid' })
  roleId: string;

  /** Null: the role's whole scope; otherwise the sites (of an organization owner) it is restricted to, sorted. */
  @Column({ name: 'site_ids', type: 'uuid', array: true, nullable: true })
  siteIds: string[] | null;

  /** The administrator who saved the list; the mapping is re-checked against them when applied. */
  @Column({ name: 'set_by', type: 'uuid', nullable: true })
  setBy: string | null;
}
