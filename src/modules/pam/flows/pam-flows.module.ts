import { Module } from '@nestjs/common';
import { PamApprovalsModule } from '../approvals/pam-approvals.module';
import { PamDecisionModule } from '../decision/pam-decision.module';
import { PamRequestsModule } from '../requests/pam-requests.module';
import { FlowController } from './flow.controller';
import { FlowRepository } from './flow.repository';
import { FlowService } from './flow.service';

/** POST /pam/jit-requests and POST /pam/tool-actions. */
@Module({
  imports: [PamDecisionModule, PamRequestsModule, PamApprovalsModule],
  controllers: [FlowController],
  providers: [FlowRepository, FlowService],
})
export class PamFlowsModule {}
