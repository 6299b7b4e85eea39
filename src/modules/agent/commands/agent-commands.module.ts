import { Module } from '@nestjs/common';
import { PamModule } from '../../pam/pam.module';
import { AgentPresenceModule } from '../../tenancy/devices/agent-presence.module';
import { AgentCommandController } from './agent-command.controller';
import { AgentCommandRepository } from './agent-command.repository';
import { AgentCommandService } from './agent-command.service';
import { CommandQueueReads } from './command-queue-reads';
import { CommandWakeups } from './command-wakeups';

/** GET /agents/:id/commands (a plain poll or a held wait), POST /agents/:id/commands/:commandId/ack and …/result. */
@Module({
  imports: [PamModule, AgentPresenceModule],
  controllers: [AgentCommandController],
  providers: [AgentCommandRepository, AgentCommandService, CommandQueueReads, CommandWakeups],
  exports: [CommandWakeups],
})
export class AgentCommandsModule {}
