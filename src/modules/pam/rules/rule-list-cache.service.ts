import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { PamRuleDto } from './pam-rule.dto';
import { PamRuleRepository, type PamRuleRow } from './pam-rule.repository';
import { toRuleDto } from './pam-rule-row.util';
import { RulesVersionRepository } from './rules-version.repository';

/** Organizations whose rule lists are kept; the least recently listed beyond it are dropped. */
export const RULE_LIST_CACHE_SIZE = 500;

interface Entry {
  version: string;
  rules: readonly PamRuleDto[];
}

/**
 * The rules of each organization as `GET /pam/rules` returns them, kept per organization and
 * rules version (the counter every rule write bumps in its own transaction), so a console
 * listing an unchanged organization reads one version row instead of every rule.
 *
 * Versions are read before rules, as in PamRuleSetCacheService: a list is never filed under a version
 * newer than the rows it was built from; a write landing in between only costs a rebuild.
 * Runs in the caller's transaction, so row-level security decides what is read.
 * Cached rule objects are frozen and shared between requests.
 */
@Injectable()
export class PamRuleListCacheService {
  private readonly entries = new LRUCache<string, Entry>({ max: RULE_LIST_CACHE_SIZE });

  constructor(
    private readonly versions: RulesVersionRepository,
    private readonly rules: PamRuleRepository,
  ) {}

  /** The rules of these organizations, ordered by organization id, then evaluation order. */
  async rulesOf(orgIds: readonly string[]): Promise<PamRuleDto[]> {
    if (!orgIds.length) return [];
    const versions = await this.versions.currentOf(orgIds);
    const lists = new Map<string, readonly PamRuleDto[]>();
    const stale: string[] = [];
    for (const orgId of orgIds) {
      const entry = this.entries.get(orgId);
      if (entry && entry.version === versions.get(orgId)) {
        lists.set(orgId, entry.rules);
      } else {
        stale.push(orgId);
      }
    }
    if (stale.length) {
      const byOrg = groupByOrg(await this.rules.listOf(stale));
      for (const orgId of stale) {
        const rules = Object.freeze((byOrg.get(orgId) ?? []).map((row) => Object.freeze(toRuleDto(row))));
        lists.set(orgId, rules);
        this.entries.set(orgId, { version: versions.get(orgId) ?? '0', rules });
      }
    }
    return [...orgIds].sort().flatMap((orgId) => lists.get(orgId) ?? []);
  }

  get size(): number {
    return this.entries.size;
  }
}

function groupByOrg(rows: readonly PamRuleRow[]): Map<string, PamRuleRow[]> {
  const out = new Map<string, PamRuleRow[]>();
  for (const row of rows) {
    const list = out.get(row.org_id);
    if (list) list.push(row);
    else out.set(row.org_id, [row]);
  }
  return out;
}
