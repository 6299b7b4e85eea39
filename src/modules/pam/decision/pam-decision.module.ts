import { Module } from '@nestjs/common';
import { DecisionChainService } from './decision-chain.service';
import { DecisionRuleSets } from './decision-rule-sets.service';
import { DecisionRepository } from './decision.repository';

/** The PAM decision chain, shared by agent ingest and the JIT and tool-action flows. */
@Module({
  providers: [DecisionChainService, DecisionRepository, DecisionRuleSets],
  exports: [DecisionChainService],
})
export class PamDecisionModule {}
