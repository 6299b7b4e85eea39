import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';

export type LinkKind = 'customer' | 'location' | 'device' | 'device_group' | 'custom_field' | 'script' | 'policy';

export interface Link {
  namespace: string | null;
  external_id: string;
  local_id: string;
}

export interface LinkWrite {
  kind: LinkKind;
  namespace: string | null;
  externalId: string;
  orgId: string | null;
  localId: string;
}

export interface MatchWrite {
  org_id: string;
  source_ref: string;
  external_id: string;
  source: object;
  candidate_id: string;
  reason: string;
}

/**
 * The importer's own tables beside the imports themselves: the links from a source system's
 * records to the rows they became, and contacts held back as possible matches. The rows the
 * links point to are written by their owners' services (tenancy, content, policies).
 */
@Injectable()
export class ImportLinkRepository {
  constructor(private readonly db: DbService) {}

  /** Serialises the phases of concurrent imports of one partner (released at commit). */
  async lockPartner(partnerId: string): Promise<void> {
    await this.db.rows(`SELECT pg_advisory_xact_lock(hashtext('import:' || $1::text))`, [partnerId]);
  }

  links(partnerId: string, source: string, kind: LinkKind): Promise<Link[]> {
    return this.db.rows<Link>(`SELECT namespace, external_id, local_id FROM import_links WHERE partner_id = $1 AND source_system = $2 AND kind = $3`, [partnerId, source, kind]);
  }

  /** Device links of one organization from any source (CSV rows carry no source name). */
  deviceLinksOfOrg(orgId: string): Promise<{ external_id: string; local_id: string }[]> {
    return this.db.rows(`SELECT external_id, local_id FROM import_links WHERE org_id = $1 AND kind = 'device'`, [orgId]);
  }

  async saveLinks(partnerId: string, source: string, links: LinkWrite[]): Promise<void> {
    if (!links.length) return;
    await this.db.exec(
      `INSERT INTO import_links (partner_id, source_system, kind, namespace, external_id, org_id, local_id)
       SELECT $1, $2, x.kind, x.namespace, x.external_id, x.org_id, x.local_id
         FROM jsonb_to_recordset($3::jsonb) AS x(kind text, namespace uuid, external_id text, org_id uuid, local_id uuid)
       ON CONFLICT (partner_id, source_system, kind, namespace, external_id)
       DO UPDATE SET local_id = EXCLUDED.local_id, org_id = EXCLUDED.org_id
       WHERE (import_links.local_id, import_links.org_id) IS DISTINCT FROM (EXCLUDED.local_id, EXCLUDED.org_id)`,
      [partnerId, source, JSON.stringify(links.map((l) => ({ kind: l.kind, namespace: l.namespace, external_id: l.externalId, org_id: l.orgId, local_id: l.localId })))],
    );
  }

  pendingMatches(orgIds: string[]): Promise<{ org_id: string; external_id: string; candidate_id: string | null; reason: string }[]> {
    return this.db.rows(`SELECT org_id, external_id, candidate_id, reason FROM import_matches WHERE org_id = ANY ($1::uuid[]) AND status = 'pending'`, [orgIds]);
  }

  async insertMatches(importId: string, rows: MatchWrite[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO import_matches (org_id, import_id, source_ref, external_id, source, candidate_id, reason)
       SELECT x.org_id, $1, x.source_ref, x.external_id, x.source, x.candidate_id, x.reason
         FROM jsonb_to_recordset($2::jsonb) AS x(org_id uuid, source_ref text, external_id text, source jsonb, candidate_id uuid, reason text)`,
      [importId, JSON.stringify(rows)],
    );
  }
}
