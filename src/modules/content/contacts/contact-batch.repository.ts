import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { ContactPhone } from './contact-fields.util';

/** A contact as the importer compares and writes it (column names). */
export interface ContactRecord {
  id: string;
  org_id: string;
  site_id: string | null;
  name: string;
  email: string | null;
  phones: ContactPhone[];
  title: string | null;
  notes: string | null;
  external_id: string | null;
}

/**
 * Contacts written in bulk (the importer), through ContactService, in the caller's transaction:
 * one statement per kind of change for a whole batch (jsonb_to_recordset).
 */
@Injectable()
export class ContactBatchRepository {
  constructor(private readonly db: DbService) {}

  /** Oldest first: callers matching on email or name let the oldest contact win a tie. */
  ofOrgs(orgIds: string[]): Promise<ContactRecord[]> {
    return this.db.rows<ContactRecord>(`SELECT id, org_id, site_id, name, email, phones, title, notes, external_id FROM contacts WHERE org_id = ANY ($1::uuid[]) ORDER BY created_at, id`, [orgIds]);
  }

  one(orgId: string, id: string): Promise<ContactRecord | null> {
    return this.db.one<ContactRecord>(`SELECT id, org_id, site_id, name, email, phones, title, notes, external_id FROM contacts WHERE org_id = $1 AND id = $2`, [orgId, id]);
  }

  async insertMany(rows: ContactRecord[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO contacts (id, org_id, site_id, name, email, phones, title, notes, external_id)
       SELECT x.id, x.org_id, x.site_id, x.name, x.email, x.phones, x.title, x.notes, x.external_id
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id uuid, site_id uuid, name text, email text, phones jsonb, title text, notes text, external_id text)`,
      [JSON.stringify(rows)],
    );
  }

  async updateMany(rows: ContactRecord[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `UPDATE contacts c SET site_id = x.site_id, name = x.name, email = x.email, phones = x.phones, title = x.title, notes = x.notes,
              external_id = x.external_id, updated_at = now()
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id uuid, site_id uuid, name text, email text, phones jsonb, title text, notes text, external_id text)
        WHERE c.org_id = x.org_id AND c.id = x.id`,
      [JSON.stringify(rows)],
    );
  }
}
