import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';
import type { ContactPhone } from './contact-fields.util';

export interface ContactRow {
  id: string;
  org_id: string;
  site_id: string | null;
  name: string;
  email: string | null;
  phones: ContactPhone[];
  title: string | null;
  notes: string | null;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ContactWrite {
  siteId: string | null;
  name: string;
  email: string | null;
  phones: ContactPhone[];
  title: string | null;
  notes: string | null;
  externalId: string | null;
}

export interface ContactFilter {
  orgId?: string;
  siteId?: string;
  q?: string;
  externalId?: string;
  /** null: every site; otherwise organization-level contacts and contacts of these sites. */
  siteIds: readonly string[] | null;
  limit: number;
  offset: number;
}

const FILTER = `($1::uuid IS NULL OR c.org_id = $1)
  AND ($2::uuid IS NULL OR c.site_id = $2)
  AND ($3::text IS NULL OR c.name ILIKE $3 OR c.email ILIKE $3 OR c.title ILIKE $3)
  AND ($4::text IS NULL OR c.external_id = $4)
  AND ($5::uuid[] IS NULL OR c.site_id IS NULL OR c.site_id = ANY ($5))`;

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function filterParams(f: ContactFilter): unknown[] {
  return [f.orgId ?? null, f.siteId ?? null, f.q ? `%${likeEscape(f.q)}%` : null, f.externalId ?? null, f.siteIds];
}

@Injectable()
export class ContactRepository {
  constructor(private readonly db: Db) {}

  async list(f: ContactFilter): Promise<{ rows: ContactRow[]; total: number }> {
    const params = filterParams(f);
    const rows = await this.db.rows<ContactRow & { total: string }>(
      `SELECT c.*, count(*) OVER () AS total FROM contacts c WHERE ${FILTER} ORDER BY lower(c.name), c.id LIMIT $6 OFFSET $7`,
      [...params, f.limit, f.offset],
    );
    if (rows.length) return { rows: rows.map(({ total: _t, ...r }) => r), total: Number(rows[0].total) };
    // A page past the end still reports how many there are.
    const count = f.offset > 0 ? await this.db.one<{ n: string }>(`SELECT count(*) AS n FROM contacts c WHERE ${FILTER}`, params) : null;
    return { rows: [], total: Number(count?.n ?? 0) };
  }

  find(id: string): Promise<ContactRow | null> {
    return this.db.one<ContactRow>(`SELECT * FROM contacts WHERE id = $1`, [id]);
  }

  siteOrg(siteId: string): Promise<{ org_id: string } | null> {
    return this.db.one<{ org_id: string }>(`SELECT org_id FROM sites WHERE id = $1`, [siteId]);
  }

  insert(orgId: string, c: ContactWrite): Promise<ContactRow | null> {
    return this.db.one<ContactRow>(
      `INSERT INTO contacts (org_id, site_id, name, email, phones, title, notes, external_id)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8) RETURNING *`,
      [orgId, c.siteId, c.name, c.email, JSON.stringify(c.phones), c.title, c.notes, c.externalId],
    );
  }

  update(id: string, c: ContactWrite): Promise<ContactRow | null> {
    return this.db.one<ContactRow>(
      `UPDATE contacts SET site_id = $2, name = $3, email = $4, phones = $5::jsonb, title = $6, notes = $7, external_id = $8, updated_at = now()
        WHERE id = $1 RETURNING *`,
      [id, c.siteId, c.name, c.email, JSON.stringify(c.phones), c.title, c.notes, c.externalId],
    );
  }

  delete(id: string): Promise<number> {
    return this.db.exec(`DELETE FROM contacts WHERE id = $1`, [id]);
  }
}
