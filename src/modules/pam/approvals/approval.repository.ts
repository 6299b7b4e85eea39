import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../../infra/database/db.service';
import type { ElevationStatus } from '../requests/elevation-request.types';

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired';

export interface ApprovalRow {
  id: string;
  org_id: string;
  elevation_request_id: string;
  approver_user_id: string;
  status: ApprovalStatus;
  expires_at: Date;
  /** expires_at has passed (database clock). */
  lapsed: boolean;
  created_at: Date;
  site_id: string;
  device_id: string;
  device_hostname: string | null;
  flow_type: string;
  request_status: ElevationStatus;
  subject_username: string | null;
  subject_user_id: string | null;
  target_executable_path: string | null;
  target_executable_signer: string | null;
  tool_name: string | null;
  risk_tier: number | null;
  requested_at: Date;
}

const SELECT_APPROVAL = `
  SELECT a.id, a.org_id, a.elevation_request_id, a.approver_user_id, a.status, a.expires_at, a.expires_at <= now() AS lapsed,
         a.created_at, e.site_id, e.device_id, d.hostname AS device_hostname, e.flow_type, e.status AS request_status,
         e.subject_username, e.subject_user_id, e.target_executable_path, e.target_executable_signer, e.tool_name, e.risk_tier, e.requested_at
    FROM pam_approval_requests a
    JOIN elevation_requests e ON e.org_id = a.org_id AND e.id = a.elevation_request_id
    LEFT JOIN devices d ON d.org_id = e.org_id AND d.id = e.device_id`;

/**
 * The approval requests and push-outbox rows of a pending request, in one statement (ingest's hot
 * path): the PL/pgSQL function app_pam_approval_fan_out (migration 1763700800000), whose plan stays
 * cached on the server connection (planning it costs several times its execution).
 */
const FAN_OUT = prepared('pam_approval_fan_out', `SELECT approvals, pushes FROM app_pam_approval_fan_out($1, $2, $3)`);

@Injectable()
export class ApprovalRepository {
  constructor(private readonly db: DbService) {}

  /**
   * One approval request per eligible technician of a pending request, and one push per phone of
   * each, in a single statement. Eligible: an active user whose organization or partner role grants
   * devices:execute on the request's organization and site, who has a registered phone and who is
   * not the subject of a just-in-time request (who may not approve it). Must run in system
   * context: technicians' memberships belong to the partner, beyond the organization scope of
   * the ingesting agent.
   */
  async fanOut(orgId: string, elevationRequestId: string, ttlMinutes: number): Promise<{ approvals: number; pushes: number }> {
    const [row] = await this.db.rows<{ approvals: string; pushes: string }>(
      FAN_OUT,
      [orgId, elevationRequestId, ttlMinutes],
    );
    return { approvals: Number(row.approvals), pushes: Number(row.pushes) };
  }

  /** The caller's approval requests still open, soonest to lapse first. */
  pendingFor(userId: string, siteIds: readonly string[] | null): Promise<ApprovalRow[]> {
    return this.db.rows<ApprovalRow>(
      `${SELECT_APPROVAL}
        WHERE a.approver_user_id = $1 AND a.status = 'pending' AND a.expires_at > now() AND e.status = 'pending'
          AND ($2::uuid[] IS NULL OR e.site_id = ANY($2::uuid[]))
        ORDER BY a.expires_at, a.id LIMIT 200`,
      [userId, siteIds],
    );
  }

  find(id: string): Promise<ApprovalRow | null> {
    return this.db.one<ApprovalRow>(`${SELECT_APPROVAL} WHERE a.id = $1`, [id]);
  }

  /** The decided approval request, as a compare-and-swap on its own status and expiry. */
  async decide(id: string, status: 'approved' | 'denied'): Promise<boolean> {
    return (await this.db.exec(`UPDATE pam_approval_requests SET status = $2, decided_at = now() WHERE id = $1 AND status = 'pending' AND expires_at > now()`, [id, status])) === 1;
  }
}
