import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import type { Response } from 'express';
import { Auth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../common/decorators/no-request-transaction.decorator';
import type { Principal } from '../../common/principal';
import { AuditExportService } from './audit-export.service';
import { AuditQueryService } from './audit-query.service';
import { AUDIT_EXPORT, AuditExportEventDto, AuditExportTrailerDto, ExportAuditLogsQueryDto } from './dto/audit-export.dto';
import { AuditLogListDto, ListAuditLogsQueryDto } from './dto/audit.dto';

/** Who may read the audit log, by either route: the list and the export answer the same callers. */
const AUDIT_READERS = { permission: 'audit:read' } as const;

@ApiTags('audit')
@Controller('audit-logs')
export class AuditController {
  constructor(
    private readonly audit: AuditQueryService,
    private readonly exporter: AuditExportService,
  ) {}

  /**
   * Searches the audit log, newest first, a page at a time.
   *
   * @remarks Needs `audit:read`. Filters: `action` (exact, or a prefix ending in `*` such as `sso.provider.*`),
   * actor, the person behind an action (`actorUserId`, whichever credential they used), resource, organization and
   * a time range.
   */
  @Get()
  @Auth(AUDIT_READERS)
  list(@Query() query: ListAuditLogsQueryDto): Promise<AuditLogListDto> {
    return this.audit.list(query);
  }

  /**
   * Streams the audit log as NDJSON, oldest first, for a SIEM to pull continuously.
   *
   * @remarks Needs `audit:read` (API keys too); answers the events `GET /audit-logs` shows the caller. One event
   * per line (`application/x-ndjson`) in the order (`createdAt`, `id`), each with the `cursor` that resumes right
   * after it; the last line is `{ "end": { cursor, count, more, until } }`. Start with `from` (ISO 8601, with `Z` or an
   * offset); resume with `cursor` alone, exactly as received: the next response starts right after it, so every
   * event is delivered once. `to` defaults to now and may be at most 31 days after `from` (or the cursor's event);
   * without `to`, a response ends 31 days after its start and says `more`. Events of the last 2 seconds, and
   * any newer than the start of a transaction still open, are held back until they settle. `limit`: events per
   * response, 1 to 100,000 (default 10,000); `more` is true when more can be read now. A stream cut before its last
   * line resumes from the last complete event's `cursor`. 60 requests per minute per client address.
   */
  @Get('export')
  @Auth(AUDIT_READERS)
  // Each batch is one statement of its own: no transaction, nor its pooled connection, is held while the client reads.
  @NoRequestTransaction()
  @Throttle({ default: { limit: AUDIT_EXPORT.perMinute, ttl: 60_000 } })
  @ApiExtraModels(AuditExportEventDto, AuditExportTrailerDto)
  @ApiOkResponse({
    description: 'One JSON object per line: the events, then the trailer.',
    content: {
      'application/x-ndjson': { schema: { oneOf: [{ $ref: getSchemaPath(AuditExportEventDto) }, { $ref: getSchemaPath(AuditExportTrailerDto) }] } },
    },
  })
  export(@CurrentPrincipal() principal: Principal, @Query() query: ExportAuditLogsQueryDto, @Res() res: Response): Promise<void> {
    return this.exporter.export(principal, query, res);
  }
}
