import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { UnmatchedVerdict } from './pam-config.dto';

export interface PamConfigRow {
  org_id: string;
  default_unmatched_verdict: UnmatchedVerdict;
  default_approval_duration_minutes: number;
}

@Injectable()
export class PamConfigRepository {
  constructor(private readonly db: DbService) {}

  find(orgId: string): Promise<PamConfigRow | null> {
    return this.db.one<PamConfigRow>(
      `SELECT org_id, default_unmatched_verdict, default_approval_duration_minutes FROM pam_org_config WHERE org_id = $1`,
      [orgId],
    );
  }

  /** One row per organization; an absent duration keeps the stored one (15 on first write). */
  async upsert(orgId: string, verdict: UnmatchedVerdict, durationMinutes: number | null, updatedBy: string | null): Promise<PamConfigRow> {
    const row = await this.db.one<PamConfigRow>(
      `INSERT INTO pam_org_config (org_id, default_unmatched_verdict, default_approval_duration_minutes, updated_by)
       VALUES ($1, $2, coalesce($3, 15), $4)
       ON CONFLICT (org_id) DO UPDATE SET
         default_unmatched_verdict = EXCLUDED.default_unmatched_verdict,
         default_approval_duration_minutes = coalesce($3, pam_org_config.default_approval_duration_minutes),
         updated_by = EXCLUDED.updated_by,
         updated_at = now()
       RETURNING org_id, default_unmatched_verdict, default_approval_duration_minutes`,
      [orgId, verdict, durationMinutes, updatedBy],
    );
    return row!;
  }
}
