import { Injectable } from '@nestjs/common';
import { compileRules, type CompiledRuleSet } from '../rules/engine/rule-engine';
import type { Evaluator } from './decision-chain.util';
import { DecisionRepository } from './decision.repository';

const MAX_ORGS = 10_000;

/**
 * Compiled rule sets by organization, reused while the organization's rules version is
 * unchanged (every rule and signer-group write bumps it in its own transaction, so all
 * instances notice on their next read). A set that cannot be compiled is remembered as such
 * for its version, so a broken rule costs one compilation, not one per request, and every
 * request meanwhile is recorded as pending.
 */
@Injectable()
export class DecisionRuleSets {
  private readonly cache = new Map<string, { version: number; set: Evaluator<CompiledRuleSet> }>();

  constructor(private readonly repo: DecisionRepository) {}

  /** `version`: the organization's rules version when the caller has already read it in this transaction. */
  async get(orgId: string, version?: number): Promise<Evaluator<CompiledRuleSet>> {
    const current = version ?? (await this.repo.rulesVersion(orgId));
    const hit = this.cache.get(orgId);
    if (hit && hit.version === current) return hit.set;
    const source = await this.repo.ruleSetSource(orgId);
    let set: Evaluator<CompiledRuleSet>;
    try {
      set = { ok: true, value: compileRules(source.rules, source.signerGroups) };
    } catch (e) {
      set = { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    if (!hit && this.cache.size >= MAX_ORGS) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(orgId, { version: current, set });
    return set;
  }
}
