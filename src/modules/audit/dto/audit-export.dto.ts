import { Type } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, IsString, IsUUID, Matches, Max, Min } from 'class-validator';
import type { DateTime, Int } from '../../../common/openapi/formats';
import { AuditLogDto } from './audit.dto';

/** The limits of GET /audit-logs/export (docs/api-conventions.md, "Exporting the audit log"). */
export const AUDIT_EXPORT = {
  /** Events per request when `limit` is not given. */
  defaultLimit: 10_000,
  /** The largest `limit`. */
  maxLimit: 100_000,
  /** The longest time range one request covers: `to` − `from` at most this. */
  maxRangeDays: 31,
  /** Events read per statement: what the service holds in memory per stream. */
  batchSize: 1_000,
  /**
   * Events younger than this are not exported yet: their transactions may still be joined by
   * others that began earlier (the service also waits for every open transaction it can see).
   */
  settleSeconds: 2,
  /** A client that reads nothing for this long loses its connection. */
  stallMs: 60_000,
  /** Export requests per minute per client address. */
  perMinute: 60,
} as const;

export class ExportAuditLogsQueryDto {
  /**
   * The first instant to export (inclusive), ISO 8601 with `Z` or an offset, or a date (midnight UTC).
   * Required unless `cursor` is given; not allowed with it.
   */
  @IsOptional() @IsISO8601({ strict: true }) from?: string;
  /**
   * The last instant to export (inclusive); default: now. At most 31 days after `from` (or after the
   * cursor's event). Events of the last few seconds are held back until they settle, whatever `to` says.
   */
  @IsOptional() @IsISO8601({ strict: true }) to?: string;
  /** Resume strictly after the event (or the end of a response) this cursor came with, exactly as it was received. */
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_-]{34}$/) cursor?: string;
  /** Events in this response, 1 to 100,000 (default 10,000). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(AUDIT_EXPORT.maxLimit) limit?: number = AUDIT_EXPORT.defaultLimit;
  /** Only this organization's events (a partner's technician exporting one customer). */
  @IsOptional() @IsUUID() orgId?: string;
}

/** One line of the stream but the last: an audit event as GET /audit-logs answers it, with the cursor that resumes right after it. */
export class AuditExportEventDto extends AuditLogDto {
  /** Pass it as `cursor` to resume after this event. Opaque: store it as it is. */
  cursor: string;
}

export class AuditExportEndDto {
  /** Pass it as `cursor` to continue after everything this response covered. */
  cursor: string;
  /** Events in this response. */
  count: Int;
  /**
   * True when more events can be read right now: the response stopped at `limit`, at the end of a
   * 31-day range, or because the instance is stopping. False when every settled event up to `until`
   * (and `to`) has been sent: ask again later with `cursor`.
   */
  more: boolean;
  /** The response covered events up to this instant (to the millisecond), unless `more` is true. */
  until: DateTime;
}

/** The last line of the stream. A stream that ends without it was cut: resume from the last complete event's `cursor`. */
export class AuditExportTrailerDto {
  end: AuditExportEndDto;
}
