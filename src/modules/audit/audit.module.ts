import { Global, Module } from '@nestjs/common';
import { AuditController } from './audit.controller';
import { AuditExportRepository } from './audit-export.repository';
import { AuditExportService } from './audit-export.service';
import { AuditQueryService } from './audit-query.service';
import { AuditService } from './audit.service';
import { RefusalService } from './refusal.service';

@Global()
@Module({
  controllers: [AuditController],
  providers: [AuditService, AuditQueryService, AuditExportRepository, AuditExportService, RefusalService],
  exports: [AuditService, RefusalService],
})
export class AuditModule {}
