import { Module } from '@nestjs/common';
import { PamModule } from '../../pam/pam.module';
import { AgentCommandController } from './agent-command.controller';
import { AgentCommandRepository } from './agent-command.repository';
import { AgentCommandService } from './agent-command.service';

/** GET /agents/:id/commands and POST /agents/:id/commands/:commandId/result. */
@Module({
  imports: [PamModule],
  controllers: [AgentCommandController],
  providers: [AgentCommandRepository, AgentCommandService],
})
export class AgentCommandsModule {}
