import { Injectable } from '@nestjs/common';
import { DbService } from '../../../../infra/database/db.service';

export interface ClaimedPush {
  id: string;
  attempts: number;
  approval_request_id: string;
  elevation_request_id: string;
  org_id: string;
  /** The approval request can still be decided: pending and not lapsed. */
  deliverable: boolean;
  approval_expires_at: Date;
  mobile_device_id: string;
  platform: 'ios' | 'android';
  push_token: string;
  device_hostname: string | null;
  flow_type: string;
  target_executable_path: string | null;
  tool_name: string | null;
}

export type PushOutcome =
  | { id: string; kind: 'delivered' }
  | { id: string; kind: 'retry'; delaySeconds: number; error: string }
  | { id: string; kind: 'failed'; error: string }
  | { id: string; kind: 'cancelled'; error: string };

/** Every method runs in system context: the worker serves every organization. */
@Injectable()
export class PushOutboxRepository {
  constructor(private readonly db: DbService) {}

  /**
   * Claims due rows: the attempt is counted and the row leased (next_attempt_at moved past the
   * lease) in the claiming statement, so a row is sent by one worker at a time, and a worker that
   * dies mid-send leaves it to be claimed again when the lease ends.
   */
  claim(batch: number, leaseSeconds: number): Promise<ClaimedPush[]> {
    return this.db.rows<ClaimedPush>(
      `WITH due AS (
         SELECT id FROM push_outbox WHERE status = 'pending' AND next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED
       ), claimed AS (
         UPDATE push_outbox o SET attempts = o.attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
           FROM due WHERE o.id = due.id
         RETURNING o.id, o.attempts, o.org_id, o.approval_request_id, o.mobile_device_id
       )
       SELECT c.id, c.attempts, c.approval_request_id, a.elevation_request_id, c.org_id,
              (a.status = 'pending' AND a.expires_at > now()) AS deliverable, a.expires_at AS approval_expires_at,
              md.id AS mobile_device_id, md.platform, md.push_token,
              d.hostname AS device_hostname, e.flow_type, e.target_executable_path, e.tool_name
         FROM claimed c
         JOIN pam_approval_requests a ON a.org_id = c.org_id AND a.id = c.approval_request_id
         JOIN mobile_devices md ON md.id = c.mobile_device_id
         JOIN elevation_requests e ON e.org_id = a.org_id AND e.id = a.elevation_request_id
         LEFT JOIN devices d ON d.org_id = e.org_id AND d.id = e.device_id`,
      [batch, leaseSeconds],
    );
  }

  /** Records a batch of outcomes in one statement. */
  async record(outcomes: readonly PushOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await this.db.exec(
      `UPDATE push_outbox o
          SET status = CASE x.kind WHEN 'retry' THEN 'pending' ELSE x.kind END,
              delivered_at = CASE WHEN x.kind = 'delivered' THEN now() END,
              next_attempt_at = CASE WHEN x.kind = 'retry' THEN now() + make_interval(secs => x.delay) ELSE o.next_attempt_at END,
              last_error = x.error
         FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[]) AS x(id, kind, delay, error)
        WHERE o.id = x.id AND o.status = 'pending'`,
      [
        outcomes.map((o) => o.id),
        outcomes.map((o) => o.kind),
        outcomes.map((o) => (o.kind === 'retry' ? o.delaySeconds : 0)),
        outcomes.map((o) => (o.kind === 'delivered' ? null : o.error.slice(0, 500))),
      ],
    );
  }

  /** Rows waiting to be sent and rows that ran out of attempts, across every organization (the push outbox gauge). */
  async backlog(): Promise<{ pending: number; failed: number }> {
    const row = await this.db.one<{ pending: number; failed: number }>(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'failed')::int AS failed
         FROM push_outbox WHERE status IN ('pending', 'failed')`,
    );
    return row ?? { pending: 0, failed: 0 };
  }
}
