import { Module } from '@nestjs/common';
import { PamControlModule } from '../pam-control.module';
import { DecisionChainService } from './decision-chain.service';

/** The PAM decision chain, shared by agent ingest and the JIT and tool-action flows. */
@Module({
  imports: [PamControlModule],
  providers: [DecisionChainService],
  exports: [DecisionChainService],
})
export class PamDecisionModule {}
