import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

export interface SsoDomainRow {
  id: string;
  org_id: string;
  domain: string;
  token: string;
  verified: boolean;
  verified_at: Date | null;
  last_checked_at: Date | null;
  last_seen_at: Date | null;
  created_by: string | null;
  created_at: Date;
}

@Injectable()
export class SsoDomainRepository {
  constructor(private readonly db: Db) {}

  list(orgId: string | null): Promise<SsoDomainRow[]> {
    return orgId
      ? this.db.rows<SsoDomainRow>(`SELECT * FROM sso_verified_domains WHERE org_id = $1 ORDER BY domain, id`, [orgId])
      : this.db.rows<SsoDomainRow>(`SELECT * FROM sso_verified_domains ORDER BY org_id, domain, id`);
  }

  find(id: string): Promise<SsoDomainRow | null> {
    return this.db.one<SsoDomainRow>(`SELECT * FROM sso_verified_domains WHERE id = $1`, [id]);
  }

  /** Null when the organization already claimed the domain. */
  insert(d: { orgId: string; domain: string; token: string; createdBy: string | null }): Promise<SsoDomainRow | null> {
    return this.db.one<SsoDomainRow>(
      `INSERT INTO sso_verified_domains (org_id, domain, token, created_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (org_id, domain) DO NOTHING RETURNING *`,
      [d.orgId, d.domain, d.token, d.createdBy],
    );
  }

  delete(id: string): Promise<SsoDomainRow | null> {
    return this.db.one<SsoDomainRow>(`DELETE FROM sso_verified_domains WHERE id = $1 RETURNING *`, [id]);
  }

  /** The record was seen: verified from now on (keeping the first verification time). */
  markSeen(id: string): Promise<SsoDomainRow | null> {
    return this.db.one<SsoDomainRow>(
      `UPDATE sso_verified_domains
          SET verified = true, verified_at = coalesce(verified_at, now()), last_seen_at = now(), last_checked_at = now()
        WHERE id = $1 RETURNING *`,
      [id],
    );
  }

  markChecked(id: string): Promise<SsoDomainRow | null> {
    return this.db.one<SsoDomainRow>(`UPDATE sso_verified_domains SET last_checked_at = now() WHERE id = $1 RETURNING *`, [id]);
  }

  /**
   * Un-verifies a domain whose record was last seen more than `graceHours` ago. The
   * predicate makes it a compare-and-swap: when several instances run the re-check at
   * once, exactly one of them gets the row back (and writes the audit event).
   */
  unverifyIfStale(id: string, graceHours: number): Promise<SsoDomainRow | null> {
    return this.db.one<SsoDomainRow>(
      `UPDATE sso_verified_domains
          SET verified = false, verified_at = NULL, last_checked_at = now()
        WHERE id = $1 AND verified AND last_seen_at < now() - $2 * interval '1 hour'
        RETURNING *`,
      [id, graceHours],
    );
  }

  listVerified(): Promise<SsoDomainRow[]> {
    return this.db.rows<SsoDomainRow>(`SELECT * FROM sso_verified_domains WHERE verified ORDER BY last_checked_at NULLS FIRST, id`);
  }

  async verifiedOrgIds(domain: string): Promise<string[]> {
    const rows = await this.db.rows<{ org_id: string }>(
      `SELECT org_id FROM sso_verified_domains WHERE domain = $1 AND verified ORDER BY org_id`,
      [domain],
    );
    return rows.map((r) => r.org_id);
  }

  async organizationVisible(orgId: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM organizations WHERE id = $1`, [orgId])) !== null;
  }
}
