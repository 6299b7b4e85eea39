import { Module } from '@nestjs/common';
import { PamActuationModule } from './actuation/pam-actuation.module';
import { PamApprovalsModule } from './approvals/pam-approvals.module';
import { PamDecisionModule } from './decision/pam-decision.module';
import { PamFlowsModule } from './flows/pam-flows.module';
import { PamControlModule } from './pam-control.module';
import { PamRequestsModule } from './requests/pam-requests.module';

/**
 * Privileged access management, the one module the application and the agent modules import.
 * Its sub-modules: the control plane (rules, signer groups, organization default), the decision
 * chain, the elevation-request queue, mobile approvals, device actuation and the JIT and
 * tool-action flows. What the agent modules may use, services only (no repository leaves PAM):
 * DecisionChainService, ElevationIntakeService (creating requests), ApprovalFanoutService,
 * ElevationTransitionService, PamEventService and DeviceCommandService (the agents' command queues).
 */
@Module({
  imports: [PamControlModule, PamDecisionModule, PamRequestsModule, PamApprovalsModule, PamActuationModule, PamFlowsModule],
  exports: [PamDecisionModule, PamRequestsModule, PamApprovalsModule],
})
export class PamModule {}
