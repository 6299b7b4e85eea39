import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

/**
 * The per-organization rules version. Every rule or signer-group write bumps it in its own
 * transaction, so the change and the new version commit together and every instance's
 * compiled-rule cache sees the new version on its next lookup.
 */
@Injectable()
export class RulesVersionRepository {
  constructor(private readonly db: Db) {}

  /** '0' when the organization never had a rule write. bigint travels as a string. */
  async current(orgId: string): Promise<string> {
    const row = await this.db.one<{ version: string }>(`SELECT version::text AS version FROM pam_rules_versions WHERE org_id = $1`, [orgId]);
    return row?.version ?? '0';
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
