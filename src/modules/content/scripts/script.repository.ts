import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';
import type { ExitCodeSeverity, RunAs, ScriptLanguage, ScriptParameter } from './script-shape.util';

export interface ScriptRow {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  name: string;
  description: string | null;
  category: string;
  language: ScriptLanguage;
  body?: string;
  parameters: ScriptParameter[];
  run_as: RunAs;
  timeout_seconds: number;
  exit_code_severity_mapping: ExitCodeSeverity[];
  created_at: Date;
  updated_at: Date;
}

export interface ScriptWrite {
  name: string;
  description: string | null;
  category: string;
  language: ScriptLanguage;
  body: string;
  parameters: ScriptParameter[];
  runAs: RunAs;
  timeoutSeconds: number;
  exitCodeSeverityMapping: ExitCodeSeverity[];
}

const SUMMARY = `id, partner_id, org_id, name, description, category, language, parameters, run_as, timeout_seconds, exit_code_severity_mapping, created_at, updated_at`;
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

@Injectable()
export class ScriptRepository {
  constructor(private readonly db: Db) {}

  async list(f: { orgId?: string; availability?: string; category?: string; language?: string; q?: string; limit: number; offset: number }): Promise<{ rows: ScriptRow[]; total: number }> {
    const rows = await this.db.rows<ScriptRow & { total: string }>(
      `SELECT ${SUMMARY}, count(*) OVER () AS total FROM scripts s
        WHERE ($1::uuid IS NULL OR s.org_id = $1 OR s.partner_id = (SELECT o.partner_id FROM organizations o WHERE o.id = $1))
          AND ($2::text IS NULL OR ($2 = 'partner') = (s.partner_id IS NOT NULL))
          AND ($3::text IS NULL OR lower(s.category) = lower($3))
          AND ($4::text IS NULL OR s.language = $4)
          AND ($5::text IS NULL OR s.name ILIKE $5)
        ORDER BY lower(s.category), lower(s.name), s.id
        LIMIT $6 OFFSET $7`,
      [f.orgId ?? null, f.availability ?? null, f.category ?? null, f.language ?? null, f.q ? `%${likeEscape(f.q)}%` : null, f.limit, f.offset],
    );
    return { rows: rows.map(({ total: _t, ...r }) => r), total: rows.length ? Number(rows[0].total) : 0 };
  }

  find(id: string): Promise<ScriptRow | null> {
    return this.db.one<ScriptRow>(`SELECT * FROM scripts WHERE id = $1`, [id]);
  }

  insert(owner: { partnerId: string | null; orgId: string | null }, s: ScriptWrite): Promise<ScriptRow | null> {
    return this.db.one<ScriptRow>(
      `INSERT INTO scripts (partner_id, org_id, name, description, category, language, body, parameters, run_as, timeout_seconds, exit_code_severity_mapping)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11::jsonb) RETURNING *`,
      [owner.partnerId, owner.orgId, ...writeParams(s)],
    );
  }

  update(id: string, s: ScriptWrite): Promise<ScriptRow | null> {
    return this.db.one<ScriptRow>(
      `UPDATE scripts SET name = $2, description = $3, category = $4, language = $5, body = $6, parameters = $7::jsonb, run_as = $8,
              timeout_seconds = $9, exit_code_severity_mapping = $10::jsonb, updated_at = now()
        WHERE id = $1 RETURNING *`,
      [id, ...writeParams(s)],
    );
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM scripts WHERE id = $1`, [id]);
  }
}

function writeParams(s: ScriptWrite): unknown[] {
  return [s.name, s.description, s.category, s.language, s.body, JSON.stringify(s.parameters), s.runAs, s.timeoutSeconds, JSON.stringify(s.exitCodeSeverityMapping)];
}
