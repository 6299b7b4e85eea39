import { Module } from '@nestjs/common';
import { AgentPresenceSink } from '../../../common/agent-presence-sink';
import { AgentPresenceRepository } from './agent-presence.repository';
import { AgentPresenceService } from './agent-presence.service';

/**
 * When agents were last seen. Its own small module, so the agent routes' modules (the held command
 * wait) can import it without the rest of tenancy; one instance of the service per application.
 * AgentPresenceSink is the same instance, for the global AuthGuard.
 */
@Module({
  providers: [AgentPresenceService, AgentPresenceRepository, { provide: AgentPresenceSink, useExisting: AgentPresenceService }],
  exports: [AgentPresenceService, AgentPresenceSink],
})
export class AgentPresenceModule {}
