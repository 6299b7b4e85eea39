import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { compileRules, type CompiledRuleSet } from './engine/rule-engine';
import { PamRuleRepository } from './pam-rule.repository';
import { toRuleDefinition } from './pam-rule-row.util';
import { RulesVersionRepository } from './rules-version.repository';

/** Organizations whose compiled rules are kept; the least recently used beyond it are dropped. */
export const RULE_SET_CACHE_SIZE = 1000;

interface Entry {
  version: string;
  set: Promise<CompiledRuleSet>;
}

/**
 * Compiled rules per organization, for the decision chain. Each lookup reads the
 * organization's rules version (one indexed row) in the caller's transaction and reuses the
 * compiled set only when it was built for that version, so a rule or signer-group write
 * committed by any instance is seen by the next lookup on every instance.
 *
 * Call it inside a transaction that can see the organization (its own scope or system
 * context). The version is read before the rules (rules and signer groups in one statement),
 * so a set is never filed under a version newer than the rules it was built from; a write
 * landing in between only costs a rebuild.
 * Concurrent lookups of one version share one build. A rule that cannot be compiled makes
 * `get` throw PamRuleCompileError and nothing is cached: the caller records the request as
 * pending (spec P1.3).
 */
@Injectable()
export class PamRuleSetCacheService {
  private readonly entries = new LRUCache<string, Entry>({ max: RULE_SET_CACHE_SIZE });

  constructor(
    private readonly versions: RulesVersionRepository,
    private readonly rules: PamRuleRepository,
  ) {}

  /** `knownVersion`: the version the caller read in its own transaction (saves the query). */
  async get(orgId: string, knownVersion?: string): Promise<CompiledRuleSet> {
    const version = knownVersion ?? (await this.versions.current(orgId));
    const entry = this.entries.get(orgId);
    if (entry && entry.version === version) {
      try {
        return await entry.set;
      } catch {
        // The shared build failed in another caller's transaction; build again in ours.
      }
    }
    return this.build(orgId, version);
  }

  /** Drops every cached set (tests and operations; versions make it unnecessary for correctness). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private build(orgId: string, version: string): Promise<CompiledRuleSet> {
    const set = this.load(orgId);
    const entry: Entry = { version, set };
    this.entries.set(orgId, entry);
    set.catch(() => {
      if (this.entries.get(orgId) === entry) this.entries.delete(orgId);
    });
    return set;
  }

  private async load(orgId: string): Promise<CompiledRuleSet> {
    const { rules, groups } = await this.rules.compileSource(orgId);
    return compileRules(rules.map(toRuleDefinition), new Map(groups.map((group) => [group.id, group.signers])));
  }
}
