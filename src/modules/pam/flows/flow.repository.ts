import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

export interface FlowDevice {
  id: string;
  org_id: string;
  site_id: string;
  status: string;
  /** The database clock of this transaction: the decision time and the request's requestedAt. */
  now: Date;
}

/** What the flows read before deciding; the request itself is created by ElevationIntakeService. */
@Injectable()
export class FlowRepository {
  constructor(private readonly db: DbService) {}

  device(id: string): Promise<FlowDevice | null> {
    return this.db.one<FlowDevice>(`SELECT id, org_id, site_id, status, now() AS now FROM devices WHERE id = $1`, [id]);
  }

  /** How the caller is named on the request: a user's email, else the API key's name. */
  async subjectName(userId: string | null, apiKeyId: string | null): Promise<string | null> {
    const row = await this.db.one<{ name: string | null }>(
      `SELECT coalesce((SELECT email FROM users WHERE id = $1::uuid), (SELECT 'API key ' || name FROM api_keys WHERE id = $2::uuid)) AS name`,
      [userId, apiKeyId],
    );
    return row?.name ?? null;
  }
}
