import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsUUID } from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../common/pagination.dto';
import type { ImportFormat, PhaseName } from './document/import-plan';
import type { Counts, ImportReport } from './import-report';
import type { DateTime, Int, Uuid } from '../../common/openapi/formats';

const toBool = ({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value);

export class CreateImportQueryDto {
  /** Run every phase and report, then roll back: nothing is written. */
  @IsOptional() @Transform(toBool) @IsBoolean() dryRun?: boolean;
  /** Replace custom-field values a device already has (left alone by default). */
  @IsOptional() @Transform(toBool) @IsBoolean() overwrite?: boolean;
  /** CSV imports: what the rows are. */
  @IsOptional() @IsIn(['contacts', 'custom-field-values']) type?: 'contacts' | 'custom-field-values';
  /** CSV imports: the organization the rows belong to (an organization session defaults to its own). */
  @IsOptional() @IsUUID() orgId?: string;
}

export class AcknowledgeMatchDto {
  /** merge: the existing contact takes the imported record's fields and externalId; create: the record becomes a new contact. */
  @IsIn(['merge', 'create']) action: 'merge' | 'create';
}

export class ListImportsQueryDto extends PageQueryDto {}

export class ImportPhaseDto {
  name: PhaseName;
  status: 'completed' | 'failed' | 'not_run';
  counts: Counts;
  durationMs: Int | null;
}

export class ImportDto {
  id: Uuid;
  format: ImportFormat;
  orgId: Uuid | null;
  status: 'queued' | 'running' | 'completed' | 'failed';
  dryRun: boolean;
  overwrite: boolean;
  /** The phase running now (null when queued or finished). */
  phase: PhaseName | null;
  phases: ImportPhaseDto[];
  counts: Counts;
  processedItems: Int;
  totalItems: Int;
  percent: Int;
  /** Held-back matches still waiting for acknowledgement. */
  pendingMatches: Int;
  error: { phase: PhaseName | null; message: string } | null;
  createdAt: DateTime;
  startedAt: DateTime | null;
  finishedAt: DateTime | null;
}

export class ImportWithReportDto extends ImportDto {
  /** Created, updated, unchanged, held-back and unresolved items with reasons, and location conflicts; null until the job ends. */
  report: ImportReport | null;
}

export class ImportResponseDto {
  success: true;
  import: ImportWithReportDto;
}

export class ImportListDto {
  success: true;
  imports: ImportDto[];
  pagination: PaginationDto;
}

export class ImportMatchDto {
  id: Uuid;
  importId: Uuid;
  orgId: Uuid;
  sourceRef: string;
  externalId: string;
  /** The imported record as it would be written. */
  source: Record<string, unknown>;
  candidateContactId: Uuid | null;
  reason: 'email' | 'name';
  status: 'pending' | 'merged' | 'created';
  contactId: Uuid | null;
  resolvedAt: DateTime | null;
}

export class ImportMatchListDto {
  success: true;
  matches: ImportMatchDto[];
}

export class ImportMatchResponseDto {
  success: true;
  match: ImportMatchDto;
}
