import { Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { AppException } from '../../common/errors/app.exception';
import { scopeOf, type Principal } from '../../common/principal';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { DrainState } from '../health/drain-state';
import { before, decodeCursor, EARLIEST_US, encodeCursor, endOf, isoMillis, LATEST_US, type AuditPosition } from './audit-cursor.util';
import { AuditExportRepository, type AuditExportRow } from './audit-export.repository';
import { toAuditLogDto } from './audit-query.service';
import { AUDIT_EXPORT, type AuditExportEndDto, type ExportAuditLogsQueryDto } from './dto/audit-export.dto';
import { writeRespectingBackpressure } from './ndjson-writer.util';

const DAY_US = 86_400_000_000n;
const MAX_RANGE_US = BigInt(AUDIT_EXPORT.maxRangeDays) * DAY_US;
/** A time of day given without `Z` or an offset would be read in the server's own time zone. */
const ZONED = /(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;

/** What one export request reads: after `start`, up to `untilUs`, at most `limit` events. */
interface ExportWindow {
  start: AuditPosition;
  untilUs: bigint;
  /** The window ends at the range limit while settled events lie beyond it: the trailer says `more`. */
  cut: boolean;
  limit: number;
  orgId: string | null;
}

/**
 * GET /audit-logs/export: the audit log as NDJSON, in (created_at, id) order, resumable with a
 * cursor (docs/api-conventions.md, "Exporting the audit log"). Who sees which events is decided
 * exactly as for GET /audit-logs: the route's permission (the same @Auth) and row-level security
 * under the caller's scope (scopeOf, what the request transaction of the list is opened with).
 *
 * No transaction or connection is held across the stream: each read is one statement alone with
 * the caller's settings (TenantTransactionService.runOneStatement), AUDIT_EXPORT.batchSize events
 * at a time, so behind a transaction pooler a stream occupies a server connection only while a
 * batch is read. The next batch is read only once the client has taken the previous one (write
 * backpressure), and never after it has gone.
 */
@Injectable()
export class AuditExportService {
  private readonly logger = new Logger('AuditExport');

  constructor(
    private readonly tx: TenantTransactionService,
    private readonly repo: AuditExportRepository,
    private readonly drain: DrainState,
  ) {}

  async export(principal: Principal, q: ExportAuditLogsQueryDto, res: Response): Promise<void> {
    const request = parse(q);
    const scope = scopeOf(principal);
    const read = <T>(fn: () => Promise<T>) => this.tx.runOneStatement(scope, fn);
    const settledUs = await read(() => this.repo.settledMicros(AUDIT_EXPORT.settleSeconds));
    const window = windowOf(request, settledUs);
    const gone = new AbortController();
    res.once('close', () => gone.abort());

    let position = window.start;
    let remaining = window.limit;
    let count = 0;
    const next = async (): Promise<{ rows: AuditExportRow[]; asked: number }> => {
      const asked = Math.min(AUDIT_EXPORT.batchSize, remaining + 1);
      // One row past the limit tells whether the response stopped at it with events left.
      if (window.untilUs < position.us) return { rows: [], asked };
      return { rows: await read(() => this.repo.batch(position, window.untilUs, asked, window.orgId)), asked };
    };

    // The first batch is read before the answer begins: a failure there is still an error answer.
    let batch = await next();
    res.status(200);
    res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    // Proxies that buffer answers (nginx) would hold the stream back, and its backpressure with it.
    res.setHeader('X-Accel-Buffering', 'no');

    let more = false;
    try {
      for (;;) {
        const delivered = batch.rows.slice(0, remaining);
        if (delivered.length) {
          const lines: string[] = [];
          for (const row of delivered) {
            position = { us: BigInt(row.created_us), id: row.id };
            lines.push(JSON.stringify({ ...toAuditLogDto(row), cursor: encodeCursor(position) }));
          }
          count += delivered.length;
          remaining -= delivered.length;
          const outcome = await writeRespectingBackpressure(res, `${lines.join('\n')}\n`, gone.signal, AUDIT_EXPORT.stallMs);
          if (outcome === 'stalled') {
            this.logger.warn(`Audit export: the client read nothing for ${AUDIT_EXPORT.stallMs} ms after ${count} events; closing its connection`);
            res.destroy();
          }
          if (outcome !== 'written') return;
        }
        if (batch.rows.length > delivered.length) {
          more = true;
          break;
        }
        if (batch.rows.length < batch.asked) {
          // Every event of the window has been sent: the next request starts after the window.
          if (window.untilUs >= position.us) position = endOf(window.untilUs);
          more = window.cut;
          break;
        }
        if (gone.signal.aborted) return;
        if (this.drain.draining) {
          more = true;
          break;
        }
        batch = await next();
      }
    } catch (err) {
      // The answer has begun: no error status can be sent. Cutting the stream short, without its
      // last line, tells the client to resume from the last event it received.
      this.logger.error(`Audit export failed after ${count} events; the stream is cut: ${err instanceof Error ? err.message : String(err)}`);
      res.destroy();
      return;
    }
    const end: AuditExportEndDto = { cursor: encodeCursor(position), count, more, until: isoMillis(window.untilUs) };
    res.end(`${JSON.stringify({ end })}\n`);
  }
}

interface ExportRequest {
  start: AuditPosition;
  /** Where the range limit is measured from: `from`, or the time of the cursor's event. */
  rangeStartUs: bigint;
  toUs: bigint | null;
  limit: number;
  orgId: string | null;
}

/** The request's bounds, checked together: every problem is named in one 400 `validation_failed`. */
function parse(q: ExportAuditLogsQueryDto): ExportRequest {
  const problems: { field: string; message: string }[] = [];
  const fromUs = q.from === undefined ? null : instant(q.from, 'from', problems);
  const toUs = q.to === undefined ? null : instant(q.to, 'to', problems);
  let start: AuditPosition | null = null;
  let rangeStartUs: bigint | null = null;
  if (q.cursor !== undefined) {
    if (q.from !== undefined) problems.push({ field: 'from', message: 'from must not be given with cursor: the cursor says where to resume' });
    start = decodeCursor(q.cursor);
    if (!start) problems.push({ field: 'cursor', message: 'cursor must be a cursor this service answered, passed on unchanged' });
    rangeStartUs = start?.us ?? null;
  } else if (q.from === undefined) {
    problems.push({ field: 'from', message: 'from (or cursor, to resume) is required' });
  } else if (fromUs !== null) {
    start = before(fromUs);
    rangeStartUs = fromUs;
  }
  if (toUs !== null && rangeStartUs !== null) {
    if (q.cursor === undefined && toUs < rangeStartUs) problems.push({ field: 'to', message: 'to must not be before from' });
    else if (toUs - rangeStartUs > MAX_RANGE_US) {
      problems.push({ field: 'to', message: `to must be at most ${AUDIT_EXPORT.maxRangeDays} days after ${q.cursor === undefined ? 'from' : "the cursor's event"}` });
    }
  }
  if (problems.length || !start || rangeStartUs === null) throw AppException.validation(problems);
  return { start, rangeStartUs, toUs, limit: q.limit ?? AUDIT_EXPORT.defaultLimit, orgId: q.orgId ?? null };
}

/** An ISO 8601 instant in microseconds (to the millisecond given), or null with the problem named. */
function instant(text: string, field: string, problems: { field: string; message: string }[]): bigint | null {
  const ms = Date.parse(text);
  // Anything longer than a date carries a time of day.
  if (text.length > 10 && !ZONED.test(text)) problems.push({ field, message: `${field} must name its time zone: Z or an offset such as +02:00` });
  else if (Number.isNaN(ms)) problems.push({ field, message: `${field} must be an ISO 8601 date or instant such as 2026-03-01T09:30:00Z` });
  else if (BigInt(ms) * 1000n < EARLIEST_US || BigInt(ms) * 1000n > LATEST_US) problems.push({ field, message: `${field} must be between 1970 and 9999` });
  else return BigInt(ms) * 1000n;
  return null;
}

/** The window this response reads: up to `to`, what has settled, and the range limit, whichever comes first. */
function windowOf(r: ExportRequest, settledUs: bigint): ExportWindow {
  const rangeEndUs = r.rangeStartUs + MAX_RANGE_US;
  const wanted = r.toUs === null || r.toUs > settledUs ? settledUs : r.toUs;
  const untilUs = rangeEndUs < wanted ? rangeEndUs : wanted;
  return { start: r.start, untilUs, cut: rangeEndUs < wanted, limit: r.limit, orgId: r.orgId };
}
