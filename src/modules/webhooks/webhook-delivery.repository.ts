import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';

export interface ClaimedMessage {
  id: string;
  subscription_id: string;
  partner_id: string | null;
  org_id: string | null;
  event_type: string;
  payload: unknown;
  /** This attempt's number (1 for the first). */
  attempts: number;
  manual: boolean;
  retry_until: Date;
  url: string;
  secret: string;
  /** Set while the rotation's overlap lasts. */
  previous_secret: string | null;
}

export interface AttemptOutcome {
  id: string;
  subscriptionId: string;
  partnerId: string | null;
  orgId: string | null;
  eventType: string;
  attempt: number;
  manual: boolean;
  attemptedAt: Date;
  durationMs: number;
  statusCode: number | null;
  /** delivered; retry at `nextAttemptAt`; dead: the retry window is over. */
  kind: 'delivered' | 'retry' | 'dead';
  nextAttemptAt: Date | null;
  failureReason: string | null;
  failureMessage: string | null;
}

export interface DisabledSubscription {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  failing_since: Date;
}

/** Every method runs in system context: the worker serves every tenant (withSystemContext, named by the caller). */
@Injectable()
export class WebhookDeliveryRepository {
  constructor(private readonly db: DbService) {}

  /**
   * Claims due messages of enabled subscriptions, at most `perSubscription` of each and none of the
   * subscriptions in `skip` (those with as many attempts in flight as they may have). The attempt is
   * counted and the row leased (next_attempt_at moved past the lease) in the claiming statement, so
   * a message is sent by one worker at a time, and one whose worker died mid-send is claimed again
   * when the lease ends, with the same id. Only the rows claimed are locked, after the limit: the
   * candidates (the oldest due of each subscription) are read without a lock, so a claim running
   * at the same time skips this claim's rows and takes the next ones instead of finding every
   * candidate locked.
   */
  claim(batch: number, perSubscription: number, skip: readonly string[], leaseSeconds: number): Promise<ClaimedMessage[]> {
    return this.db.rows<ClaimedMessage>(
      `WITH candidates AS MATERIALIZED (
         SELECT c.id FROM webhook_subscriptions s
          CROSS JOIN LATERAL (
            SELECT c.id FROM webhook_messages c
             WHERE c.subscription_id = s.id AND c.status = 'pending' AND c.next_attempt_at <= now()
             ORDER BY c.next_attempt_at LIMIT $2
          ) c
         WHERE s.enabled AND s.id <> ALL ($3::uuid[])
       ), due AS (
         SELECT m.id FROM candidates k JOIN webhook_messages m ON m.id = k.id
          WHERE m.status = 'pending' AND m.next_attempt_at <= now()
          ORDER BY m.next_attempt_at LIMIT $1 FOR UPDATE OF m SKIP LOCKED
       ), claimed AS (
         UPDATE webhook_messages m SET attempts = m.attempts + 1, next_attempt_at = now() + make_interval(secs => $4::int), last_attempt_at = now()
           FROM due WHERE m.id = due.id
         RETURNING m.id, m.subscription_id, m.partner_id, m.org_id, m.event_type, m.payload, m.attempts, m.manual, m.retry_until
       )
       SELECT c.*, s.url, s.secret, CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret END AS previous_secret
         FROM claimed c JOIN webhook_subscriptions s ON s.id = c.subscription_id`,
      [batch, perSubscription, [...skip], leaseSeconds],
    );
  }

  /**
   * Records a batch of attempts in one statement: each message's new state, a delivery-log row per
   * attempt, and each subscription's failure run (cleared by a success, started by the first failure
   * after one). Returns the subscriptions whose every attempt has failed for `disableAfterHours`,
   * disabled by the same statement.
   */
  async record(outcomes: readonly AttemptOutcome[], disableAfterHours: number): Promise<DisabledSubscription[]> {
    if (outcomes.length === 0) return [];
    await this.db.exec(
      `WITH x AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, "subscriptionId" uuid, "partnerId" uuid, "orgId" uuid, "eventType" text,
           attempt int, manual boolean, "attemptedAt" timestamptz, "durationMs" int, "statusCode" int, kind text, "nextAttemptAt" timestamptz,
           "failureReason" text, "failureMessage" text)
       ), messages AS (
         UPDATE webhook_messages m
            SET status = CASE x.kind WHEN 'retry' THEN 'pending' ELSE x.kind END,
                next_attempt_at = coalesce(x."nextAttemptAt", m.next_attempt_at),
                delivered_at = CASE WHEN x.kind = 'delivered' THEN x."attemptedAt" ELSE m.delivered_at END,
                manual = false
           FROM x WHERE m.id = x.id
       ), log AS (
         INSERT INTO webhook_deliveries (subscription_id, message_id, partner_id, org_id, event_type, attempt, manual, attempted_at, duration_ms,
                                         status_code, outcome, failure_reason, failure_message)
         SELECT x."subscriptionId", x.id, x."partnerId", x."orgId", x."eventType", x.attempt, x.manual, x."attemptedAt", x."durationMs",
                x."statusCode", CASE WHEN x.kind = 'delivered' THEN 'delivered' ELSE 'failed' END, x."failureReason", x."failureMessage"
           FROM x
       )
       UPDATE webhook_subscriptions s
          SET failing_since = CASE WHEN r.succeeded THEN NULL ELSE coalesce(s.failing_since, r.first_failure) END
         FROM (SELECT "subscriptionId" AS id, bool_or(kind = 'delivered') AS succeeded, min("attemptedAt") FILTER (WHERE kind <> 'delivered') AS first_failure
                 FROM x GROUP BY 1) r
        WHERE s.id = r.id AND s.failing_since IS DISTINCT FROM (CASE WHEN r.succeeded THEN NULL ELSE coalesce(s.failing_since, r.first_failure) END)`,
      [JSON.stringify(outcomes)],
    );
    const failed = [...new Set(outcomes.filter((o) => o.kind !== 'delivered').map((o) => o.subscriptionId))];
    if (failed.length === 0) return [];
    return this.db.rows<DisabledSubscription>(
      `UPDATE webhook_subscriptions SET enabled = false, disabled_at = now(), disabled_reason = 'failing_24h'
        WHERE id = ANY ($1::uuid[]) AND enabled AND failing_since <= now() - make_interval(hours => $2::int)
        RETURNING id, org_id, partner_id, failing_since`,
      [failed, disableAfterHours],
    );
  }

  /**
   * Retention: delivered and dead messages and delivery-log rows older than `days`, and messages whose
   * subscription was deleted while an event was being queued for it. At most `batch` rows of each per call.
   */
  async prune(days: number, batch: number): Promise<number> {
    const [row] = await this.db.rows<{ n: number }>(
      `WITH old_messages AS (
         DELETE FROM webhook_messages WHERE id IN (
           SELECT id FROM webhook_messages
            WHERE created_at < now() - make_interval(days => $1::int) AND status <> 'pending'
            LIMIT $2)
         RETURNING 1
       ), orphans AS (
         DELETE FROM webhook_messages WHERE id IN (
           SELECT m.id FROM webhook_messages m
            WHERE m.status = 'pending' AND m.created_at < now() - interval '1 hour'
              AND NOT EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = m.subscription_id)
            LIMIT $2)
         RETURNING 1
       ), old_log AS (
         DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE attempted_at < now() - make_interval(days => $1::int) LIMIT $2)
         RETURNING 1
       )
       SELECT ((SELECT count(*) FROM old_messages) + (SELECT count(*) FROM orphans) + (SELECT count(*) FROM old_log))::int AS n`,
      [days, batch],
    );
    return row.n;
  }

  /** Messages waiting and messages given up, across every tenant. */
  async backlog(): Promise<{ pending: number; dead: number }> {
    const row = await this.db.one<{ pending: number; dead: number }>(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'dead')::int AS dead
         FROM webhook_messages WHERE status IN ('pending', 'dead')`,
    );
    return row ?? { pending: 0, dead: 0 };
  }
}
