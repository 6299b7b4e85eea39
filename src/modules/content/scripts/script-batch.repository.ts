import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { ExitCodeSeverity, RunAs, ScriptLanguage, ScriptParameter } from './script-shape.util';

/** A script as the importer compares and writes it (column names). */
export interface ScriptRecord {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  name: string;
  description: string | null;
  category: string;
  language: ScriptLanguage;
  body: string;
  parameters: ScriptParameter[];
  run_as: RunAs;
  timeout_seconds: number;
  exit_code_severity_mapping: ExitCodeSeverity[];
}

/** Scripts written by bulk callers (the importer), through ScriptService, in the caller's transaction. */
@Injectable()
export class ScriptBatchRepository {
  constructor(private readonly db: DbService) {}

  /** The partner's own scripts and those of these organizations, bodies included. */
  ofOwners(partnerId: string, orgIds: string[]): Promise<ScriptRecord[]> {
    return this.db.rows<ScriptRecord>(
      `SELECT id, partner_id, org_id, name, description, category, language, body, parameters, run_as, timeout_seconds, exit_code_severity_mapping
         FROM scripts WHERE partner_id = $1 OR org_id = ANY ($2::uuid[])`,
      [partnerId, orgIds],
    );
  }

  /** Inserts the script, or (insert false) updates the one of that id and owner. */
  async save(s: ScriptRecord, insert: boolean): Promise<void> {
    const params = [s.id, s.partner_id, s.org_id, s.name, s.description, s.category, s.language, s.body, JSON.stringify(s.parameters), s.run_as, s.timeout_seconds, JSON.stringify(s.exit_code_severity_mapping)];
    await this.db.exec(
      insert
        ? `INSERT INTO scripts (id, partner_id, org_id, name, description, category, language, body, parameters, run_as, timeout_seconds, exit_code_severity_mapping)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12::jsonb)`
        : `UPDATE scripts SET name = $4, description = $5, category = $6, language = $7, body = $8, parameters = $9::jsonb, run_as = $10,
                  timeout_seconds = $11, exit_code_severity_mapping = $12::jsonb, updated_at = now()
            WHERE id = $1 AND partner_id IS NOT DISTINCT FROM $2 AND org_id IS NOT DISTINCT FROM $3`,
      params,
    );
  }
}
