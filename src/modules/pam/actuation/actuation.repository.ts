import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

@Injectable()
export class ActuationRepository {
  constructor(private readonly db: DbService) {}

  device(id: string): Promise<{ id: string; org_id: string; site_id: string; status: string } | null> {
    return this.db.one(`SELECT id, org_id, site_id, status FROM devices WHERE id = $1`, [id]);
  }

  /** The agent's payload carries the request id and the timeout only: the credential is minted on the device. */
  async queueActuation(orgId: string, deviceId: string, elevationRequestId: string, timeoutMs: number): Promise<string> {
    const row = await this.db.one<{ id: string }>(
      `INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id)
       VALUES ($1, $2, 'actuate_elevation', jsonb_build_object('elevationRequestId', $3::uuid, 'timeoutMs', $4::int), $3)
       RETURNING id`,
      [orgId, deviceId, elevationRequestId, timeoutMs],
    );
    return row!.id;
  }
}
