import { Column, Entity } from 'typeorm';
import { IdTimestampedEntity } from '../../../infra/database/entity-base';
import type { RoleScope } from './role.dto';

/**
 * roles (migration 1763700000000): a named permission set owned by one organization or by a
 * partner (a CHECK ties `scope` to the owner column). Written only by RoleRepository; other
 * modules (SSO default roles) read it through this entity. Names are unique per owner without
 * regard to case (unique indexes on lower(name)).
 */
@Entity({ name: 'roles' })
export class RoleEntity extends IdTimestampedEntity {
  @Column({ type: 'varchar', length: 16 })
  scope: RoleScope;

  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'text', array: true })
  permissions: string[];
}
