import { Column, Entity } from 'typeorm';
import { IdTimestampedEntity } from '../../../infra/database/entity-base';

/**
 * users (migration 1763700000000): a global identity, one per email (a unique index on
 * lower(email)). Visible to itself and to the tenants it is a member of; any scoped caller may
 * insert one, which it sees once a membership of its own exists. Written only by the repositories
 * of tenancy/users; the SCIM deprovisioning function (PL/pgSQL) disables accounts itself.
 *
 * The credential columns are never selected by default, so no read through this entity carries a
 * password hash or a TOTP seed: the sign-in checks read them with their own SQL (auth module).
 */
@Entity({ name: 'users' })
export class UserEntity extends IdTimestampedEntity {
  @Column({ type: 'varchar', length: 255 })
  email: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  /** argon2id; null for an account that has not chosen a password (SSO, a reset link to come). */
  @Column({ name: 'password_hash', type: 'text', nullable: true, select: false })
  passwordHash: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: 'active' | 'disabled';

  /** The sealed TOTP seed of the active authenticator; set: MFA is on. */
  @Column({ name: 'totp_secret', type: 'text', nullable: true, select: false })
  totpSecret: string | null;

  /** The sealed seed of an enrolment not yet activated. */
  @Column({ name: 'totp_pending_secret', type: 'text', nullable: true, select: false })
  totpPendingSecret: string | null;

  /** The last TOTP time step used (bigint, read as a string by pg), so that a code is accepted once. */
  @Column({ name: 'totp_last_step', type: 'bigint', nullable: true, select: false })
  totpLastStep: string | null;
}
