import { Column, Entity, PrimaryColumn } from 'typeorm';
import { CreatedAtColumns } from '../../../infra/database/entity-base';

/**
 * agents (migration 1763700000000): the credential of a device's agent; at most one not revoked
 * per device (partial unique index). Enrolment and decommissioning write it through
 * DeviceRepository. Agent authentication reads it by token hash with its own SQL (principal
 * resolution, a measured hot path).
 */
@Entity({ name: 'agents' })
export class AgentEntity extends CreatedAtColumns {
  /** Chosen by the service, so the enrolment can answer it with the token. */
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'org_id', type: 'uuid' })
  orgId: string;

  @Column({ name: 'device_id', type: 'uuid' })
  deviceId: string;

  /** SHA-256 of the agent token: written once, never read back. */
  @Column({ name: 'token_hash', type: 'varchar', length: 64, select: false })
  tokenHash: string;

  @Column({ name: 'last_seen_at', type: 'timestamptz', nullable: true })
  lastSeenAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
