import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../../infra/database/db.service';

const VERSIONS_OF = prepared(
  'pam_rules_versions_of',
  `SELECT o.id::text AS org_id, coalesce(v.version, 0)::text AS version
     FROM unnest($1::uuid[]) AS o(id) LEFT JOIN pam_rules_versions v ON v.org_id = o.id`,
);
const CURRENT_VERSION = prepared('pam_rules_version', `SELECT version::text AS version FROM pam_rules_versions WHERE org_id = $1`);

/**
 * The per-organization rules version. Every rule or signer-group write bumps it in its own
 * transaction, so the change and the new version commit together and every instance's
 * compiled-rule cache sees the new version on its next lookup.
 */
@Injectable()
export class RulesVersionRepository {
  constructor(private readonly db: DbService) {}

  /** '0' when the organization never had a rule write. bigint travels as a string. */
  async current(orgId: string): Promise<string> {
    const row = await this.db.one<{ version: string }>(CURRENT_VERSION, [orgId]);
    return row?.version ?? '0';
  }

  /** The versions of several organizations ('0' for one without a rule write). */
  async currentOf(orgIds: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.db.rows<{ org_id: string; version: string }>(VERSIONS_OF, [orgIds]);
    return new Map(rows.map((r) => [r.org_id, r.version]));
  }

  async bump(orgId: string): Promise<string> {
    const row = await this.db.one<{ version: string }>(
      `INSERT INTO pam_rules_versions (org_id, version) VALUES ($1, 1)
       ON CONFLICT (org_id) DO UPDATE SET version = pam_rules_versions.version + 1
       RETURNING version::text AS version`,
      [orgId],
    );
    return row!.version;
  }
}
