import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

/** Verified-domain lookups of discovery by email. Runs in a named system context. */
@Injectable()
export class EmailDiscoveryRepository {
  constructor(private readonly db: DbService) {}

  /** Up to two organizations that verified the domain by DNS: two means a collision. */
  async verifiedClaimants(domain: string): Promise<string[]> {
    const rows = await this.db.rows<{ org_id: string }>(`SELECT org_id FROM sso_verified_domains WHERE domain = $1 AND verified LIMIT 2`, [domain]);
    return rows.map((r) => r.org_id);
  }
}
