import { Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { PamConfigService } from '../config/pam-config.service';
import { isRuleGovernedFlow, PamRuleCompileError, type CompiledRuleSet } from '../rules/engine/rule-engine';
import type { Observation } from '../rules/engine/rule.types';
import { PamRuleSetCacheService } from '../rules/rule-set-cache.service';
import { Evaluator, runChain } from './decision-chain.util';
import type { AppliedSoftwarePolicy, Decision, DecisionContext, OrgPamDefaults } from './decision.types';
import { compileSoftwarePolicy, type CompiledSoftwarePolicy } from './software-bridge.util';

const MAX_POLICIES = 10_000;

/**
 * The decision chain (spec P1.3) for every flow: agent ingest, JIT requests and tool actions.
 * Rules are read only for the flow types they govern; a JIT request gets the organization default.
 * Runs in the caller's transaction and writes nothing; the caller stores the outcome.
 *
 * `observation.at` must be the server's decision time (ingest uses the database clock of its
 * transaction); an agent's `observed_at` never decides a time window.
 */
@Injectable()
export class DecisionChainService {
  private readonly logger = new Logger('DecisionChain');
  /** Compiled software policies by id and last update: recompiled only when a policy changes. */
  private readonly software = new LRUCache<string, Evaluator<CompiledSoftwarePolicy>>({ max: MAX_POLICIES });

  constructor(
    private readonly ruleSets: PamRuleSetCacheService,
    private readonly config: PamConfigService,
  ) {}

  async decide(orgId: string, siteId: string, observation: Observation, context: DecisionContext = {}): Promise<Decision> {
    const defaults = context.defaults ?? (await this.defaults(orgId));
    // A flow type no rule governs (tech_jit_admin) does not even read the rules.
    const rules = isRuleGovernedFlow(observation.flowType) ? await this.rules(orgId, context.rulesVersion) : null;
    const bridgeApplies = observation.flowType === 'uac_intercept' && !!context.software?.length;
    const decision = runChain({
      observation: { ...observation, siteId },
      software: bridgeApplies ? this.compiled(context.software!) : null,
      rules,
      defaults,
    });
    if (decision.error) this.logger.warn(`PAM evaluator failed for organization ${orgId}, request recorded as pending: ${decision.error}`);
    return decision;
  }

  private async defaults(orgId: string): Promise<OrgPamDefaults> {
    const { defaultUnmatchedVerdict, defaultApprovalDurationMinutes } = await this.config.settingsFor(orgId);
    return { defaultUnmatchedVerdict, defaultApprovalDurationMinutes };
  }

  /** A rule that cannot be compiled fails the evaluator (pending); a database failure is not an evaluator's and propagates. */
  private async rules(orgId: string, version: string | undefined): Promise<Evaluator<CompiledRuleSet>> {
    try {
      return { ok: true, value: await this.ruleSets.get(orgId, version) };
    } catch (e) {
      if (e instanceof PamRuleCompileError) return { ok: false, error: e.message };
      throw e;
    }
  }

  private compiled(applied: readonly AppliedSoftwarePolicy[]): Evaluator<readonly CompiledSoftwarePolicy[]> {
    const out: CompiledSoftwarePolicy[] = [];
    for (const p of applied) {
      const key = `${p.policyId}:${p.policyUpdatedAt.getTime()}`;
      let hit = this.software.get(key);
      if (!hit) {
        try {
          hit = { ok: true, value: compileSoftwarePolicy(p) };
        } catch (e) {
          hit = { ok: false, error: e instanceof Error ? e.message : String(e) };
        }
        this.software.set(key, hit);
      }
      if (!hit.ok) return hit;
      // The cached copy carries the name it had when compiled; a rename bumps updated_at, so it is current.
      out.push(hit.value);
    }
    return { ok: true, value: out };
  }
}
