import { Module } from '@nestjs/common';
import { PamRequestsModule } from '../pam/requests/pam-requests.module';
import { AgentCommandController } from './agent-command.controller';
import { AgentCommandRepository } from './agent-command.repository';
import { AgentCommandService } from './agent-command.service';

/** GET /agents/:id/commands and POST /agents/:id/commands/:commandId/result. */
@Module({
  imports: [PamRequestsModule],
  controllers: [AgentCommandController],
  providers: [AgentCommandRepository, AgentCommandService],
})
export class AgentCommandsModule {}
