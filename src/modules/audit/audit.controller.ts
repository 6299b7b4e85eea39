import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/decorators/auth.decorator';
import { AuditQueryService } from './audit-query.service';
import { AuditLogListDto, ListAuditLogsQueryDto } from './dto/audit.dto';

@ApiTags('audit')
@Controller('audit-logs')
export class AuditController {
  constructor(private readonly audit: AuditQueryService) {}

  /**
   * Searches the audit log, newest first, a page at a time.
   *
   * @remarks Needs `audit:read`. Filters: `action` (exact, or a prefix ending in `*` such as `sso.provider.*`),
   * actor, the person behind an action (`actorUserId`, whichever credential they used), resource, organization and
   * a time range.
   */
  @Get()
  @Auth({ permission: 'audit:read' })
  list(@Query() query: ListAuditLogsQueryDto): Promise<AuditLogListDto> {
    return this.audit.list(query);
  }
}
