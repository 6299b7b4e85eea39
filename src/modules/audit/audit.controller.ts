import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth } from '../../common/decorators/auth.decorator';
import { AuditQueryService } from './audit-query.service';
import { AuditLogListDto, ListAuditLogsQueryDto } from './dto/audit.dto';

@ApiTags('audit')
@Controller('audit-logs')
export class AuditController {
  constructor(private readonly audit: AuditQueryService) {}

  @Get()
  @Auth({ permission: 'audit:read' })
  list(@Query() query: ListAuditLogsQueryDto): Promise<AuditLogListDto> {
    return this.audit.list(query);
  }
}
