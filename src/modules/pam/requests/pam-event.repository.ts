import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { ElevationStatus, PamEventType } from './elevation-request.types';

export interface PamEventRow {
  orgId: string;
  elevationRequestId: string;
  type: PamEventType;
  fromStatus: ElevationStatus | null;
  toStatus: ElevationStatus;
  actorType: 'user' | 'api_key' | 'agent' | 'system';
  actorId: string | null;
  details: Record<string, unknown>;
}

export interface StoredPamEvent {
  id: string;
  type: PamEventType;
  from_status: ElevationStatus | null;
  to_status: ElevationStatus;
  actor_type: string;
  actor_id: string | null;
  details: Record<string, unknown>;
  created_at: Date;
}

@Injectable()
export class PamEventRepository {
  constructor(private readonly db: DbService) {}

  /** Every row in one statement, so a batch of transitions costs one round trip. */
  async insert(rows: readonly PamEventRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.exec(
      `INSERT INTO pam_elevation_events (org_id, elevation_request_id, type, from_status, to_status, actor_type, actor_id, details)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::varchar[], $4::varchar[], $5::varchar[], $6::varchar[], $7::uuid[], $8::jsonb[])`,
      [
        rows.map((r) => r.orgId),
        rows.map((r) => r.elevationRequestId),
        rows.map((r) => r.type),
        rows.map((r) => r.fromStatus),
        rows.map((r) => r.toStatus),
        rows.map((r) => r.actorType),
        rows.map((r) => r.actorId),
        rows.map((r) => JSON.stringify(r.details)),
      ],
    );
  }

  forRequest(orgId: string, elevationRequestId: string): Promise<StoredPamEvent[]> {
    return this.db.rows<StoredPamEvent>(
      `SELECT id, type, from_status, to_status, actor_type, actor_id, details, created_at
         FROM pam_elevation_events WHERE org_id = $1 AND elevation_request_id = $2 ORDER BY created_at, id`,
      [orgId, elevationRequestId],
    );
  }
}
