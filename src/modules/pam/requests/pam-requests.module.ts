import { Module } from '@nestjs/common';
import { JobsModule } from '../../../infra/jobs/jobs.module';
import { DeviceCommandRepository } from './device-command.repository';
import { DeviceCommandService } from './device-command.service';
import { ElevationExpiryJob } from './elevation-expiry.job';
import { ElevationIntakeRepository } from './elevation-intake.repository';
import { ElevationIntakeService } from './elevation-intake.service';
import { ElevationRequestController } from './elevation-request.controller';
import { ElevationRequestRepository } from './elevation-request.repository';
import { ElevationRequestService } from './elevation-request.service';
import { ElevationTransitionService } from './elevation-transition.service';
import { PamEventRepository } from './pam-event.repository';
import { PamEventService } from './pam-event.service';

/**
 * The elevation-request queue: creation, list, active, respond, revoke, the transition log and expiry.
 * Exports the creation of requests (ElevationIntakeService: agent ingest and the flows), the transitions (mobile approvals reuse the decisions, actuation the claim, agent
 * commands the actuation result), the device commands (DeviceCommandService: agents read their queues and report results through it) and the event log (agent ingest and the flows write their
 * `created` event through it); its repository stays inside.
 */
@Module({
  imports: [JobsModule],
  controllers: [ElevationRequestController],
  providers: [ElevationRequestRepository, ElevationRequestService, ElevationTransitionService, PamEventRepository, PamEventService, ElevationExpiryJob, DeviceCommandRepository, DeviceCommandService, ElevationIntakeRepository, ElevationIntakeService],
  exports: [ElevationIntakeService, ElevationTransitionService, PamEventService, DeviceCommandService],
})
export class PamRequestsModule {}
