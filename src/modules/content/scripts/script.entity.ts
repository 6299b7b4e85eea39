import { Column, Entity } from 'typeorm';
import { IdTimestampedEntity } from '../../../infra/database/entity-base';
import type { ExitCodeSeverity, RunAs, ScriptLanguage, ScriptParameter } from './script-shape.util';

/**
 * scripts (migration 1763700400000): a script available partner-wide (partnerId) or to one
 * organization (orgId); exactly one is set (a CHECK). Names are unique per owner without regard to
 * case. Written only by the scripts repositories (ScriptRepository, and ScriptBatchRepository for
 * the importer).
 */
@Entity({ name: 'scripts' })
export class ScriptEntity extends IdTimestampedEntity {
  @Column({ name: 'partner_id', type: 'uuid', nullable: true })
  partnerId: string | null;

  @Column({ name: 'org_id', type: 'uuid', nullable: true })
  orgId: string | null;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 2000, nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 100 })
  category: string;

  @Column({ type: 'varchar', length: 16 })
  language: ScriptLanguage;

  /** Up to 256 KiB; lists leave it out. */
  @Column({ type: 'text' })
  body: string;

  @Column({ type: 'jsonb' })
  parameters: ScriptParameter[];

  @Column({ name: 'run_as', type: 'varchar', length: 8 })
  runAs: RunAs;

  @Column({ name: 'timeout_seconds', type: 'integer' })
  timeoutSeconds: number;

  @Column({ name: 'exit_code_severity_mapping', type: 'jsonb' })
  exitCodeSeverityMapping: ExitCodeSeverity[];
}

/** A script without its body, as lists show it. */
export type ScriptSummary = Omit<ScriptEntity, 'body'>;
