import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

export interface SignerGroupRow {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  signers: string[];
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

@Injectable()
export class SignerGroupRepository {
  constructor(private readonly db: DbService) {}

  list(orgId: string | null): Promise<SignerGroupRow[]> {
    return this.db.rows<SignerGroupRow>(
      `SELECT * FROM pam_signer_groups WHERE ($1::uuid IS NULL OR org_id = $1) ORDER BY org_id, lower(name), id`,
      [orgId],
    );
  }

  find(id: string): Promise<SignerGroupRow | null> {
    return this.db.one<SignerGroupRow>(`SELECT * FROM pam_signer_groups WHERE id = $1`, [id]);
  }

  findInOrg(orgId: string, id: string): Promise<SignerGroupRow | null> {
    return this.db.one<SignerGroupRow>(`SELECT * FROM pam_signer_groups WHERE org_id = $1 AND id = $2`, [orgId, id]);
  }

  /** Locks the group against concurrent rule references (their foreign-key checks wait) until the transaction ends. */
  lock(id: string): Promise<SignerGroupRow | null> {
    return this.db.one<SignerGroupRow>(`SELECT * FROM pam_signer_groups WHERE id = $1 FOR UPDATE`, [id]);
  }

  async insert(g: { orgId: string; name: string; description: string | null; signers: string[]; createdBy: string | null }): Promise<SignerGroupRow> {
    const row = await this.db.one<SignerGroupRow>(
      `INSERT INTO pam_signer_groups (org_id, name, description, signers, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [g.orgId, g.name, g.description, g.signers, g.createdBy],
    );
    return row!;
  }

  /** Null when the group is gone (deleted since it was read) or not visible. */
  update(id: string, g: { name: string; description: string | null; signers: string[] }): Promise<SignerGroupRow | null> {
    return this.db.one<SignerGroupRow>(
      `UPDATE pam_signer_groups SET name = $2, description = $3, signers = $4, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, g.name, g.description, g.signers],
    );
  }

  async referencingRuleCount(orgId: string, id: string): Promise<number> {
    const row = await this.db.one<{ n: number }>(
      `SELECT count(*)::int AS n FROM pam_rules WHERE org_id = $1 AND match_signer_group_id = $2`,
      [orgId, id],
    );
    return row?.n ?? 0;
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM pam_signer_groups WHERE id = $1`, [id]);
  }
}
