import { Global, Module } from '@nestjs/common';
import { AuditController } from './audit.controller';
import { AuditQueryService } from './audit-query.service';
import { AuditService } from './audit.service';
import { RefusalService } from './refusal.service';

@Global()
@Module({ controllers: [AuditController], providers: [AuditService, AuditQueryService, RefusalService], exports: [AuditService, RefusalService] })
export class AuditModule {}
