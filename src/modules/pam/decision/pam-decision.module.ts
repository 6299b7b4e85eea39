import { Module } from '@nestjs/common';
import { PamModule } from '../pam.module';
import { DecisionChainService } from './decision-chain.service';

/** The PAM decision chain, shared by agent ingest and the JIT and tool-action flows. */
@Module({
  imports: [PamModule],
  providers: [DecisionChainService],
  exports: [DecisionChainService],
})
export class PamDecisionModule {}
