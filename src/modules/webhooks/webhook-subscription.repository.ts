import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';
import type { WebhookEventType } from './webhook-event-types';

export interface WebhookSubscriptionRow {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  url: string;
  event_types: WebhookEventType[];
  enabled: boolean;
  description: string | null;
  previous_secret_expires_at: Date | null;
  secret_rotated_at: Date | null;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookDeliveryRow {
  id: string;
  message_id: string;
  event_type: WebhookEventType;
  attempt: number;
  manual: boolean;
  attempted_at: Date;
  duration_ms: number;
  status_code: number | null;
  outcome: 'delivered' | 'failed';
  failure_reason: string | null;
  failure_message: string | null;
}

export interface WebhookMessageRow {
  id: string;
  event_type: WebhookEventType;
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
  next_attempt_at: Date;
  retry_until: Date;
  created_at: Date;
}

export interface SubscriptionWrite {
  url: string;
  eventTypes: string[];
  enabled: boolean;
  description: string | null;
}

/** The columns a response shows: never the sealed secrets. */
const COLUMNS = `id, partner_id, org_id, url, event_types, enabled, description, previous_secret_expires_at, secret_rotated_at,
  failing_since, disabled_at, disabled_reason, created_at, updated_at`;

/**
 * The administrators' statements on webhook subscriptions, their messages and delivery log, in the
 * request's transaction (row-level security applies: another tenant's rows are invisible, and a
 * partner's rows are visible only to callers reaching every organization of it). SQL rather than an
 * entity: the sealed secret columns must never be read back into an answer, and the limit check, the
 * deletion of the outbox and the redelivery are statements an entity would only wrap.
 */
@Injectable()
export class WebhookSubscriptionRepository {
  constructor(private readonly db: DbService) {}

  async list(f: { orgId?: string; scope?: string; limit: number; offset: number }): Promise<{ rows: WebhookSubscriptionRow[]; total: number }> {
    const rows = await this.db.rows<WebhookSubscriptionRow & { total: number }>(
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total FROM webhook_subscriptions
        WHERE ($1::uuid IS NULL OR org_id = $1)
          AND ($2::text IS NULL OR ($2 = 'partner') = (org_id IS NULL))
        ORDER BY created_at, id LIMIT $3 OFFSET $4`,
      [f.orgId ?? null, f.scope ?? null, f.limit, f.offset],
    );
    if (rows.length || f.offset === 0) return { rows, total: rows[0]?.total ?? 0 };
    const [count] = await this.db.rows<{ total: number }>(
      `SELECT count(*)::int AS total FROM webhook_subscriptions WHERE ($1::uuid IS NULL OR org_id = $1) AND ($2::text IS NULL OR ($2 = 'partner') = (org_id IS NULL))`,
      [f.orgId ?? null, f.scope ?? null],
    );
    return { rows: [], total: count.total };
  }

  find(id: string): Promise<WebhookSubscriptionRow | null> {
    return this.db.one<WebhookSubscriptionRow>(`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1`, [id]);
  }

  /**
   * How many subscriptions the owner has, counted under a transaction-scoped advisory lock on the
   * owner, so two creations racing for the last place are counted one after the other.
   */
  async lockAndCount(owner: { orgId: string | null; partnerId: string | null }): Promise<number> {
    // Two statements: the count's snapshot must be taken after the lock is held.
    await this.db.exec(`SELECT pg_advisory_xact_lock(hashtextextended('webhook_subscriptions:' || $1::text, 0))`, [owner.orgId ?? owner.partnerId]);
    const [row] = await this.db.rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_subscriptions s
        WHERE ($1::uuid IS NOT NULL AND s.org_id = $1) OR ($1::uuid IS NULL AND s.org_id IS NULL AND s.partner_id = $2)`,
      [owner.orgId, owner.partnerId],
    );
    return row.n;
  }

  async insert(id: string, owner: { orgId: string | null; partnerId: string | null }, w: SubscriptionWrite, sealedSecret: string, createdBy: string | null): Promise<WebhookSubscriptionRow> {
    const row = await this.db.one<WebhookSubscriptionRow>(
      `INSERT INTO webhook_subscriptions (id, partner_id, org_id, url, event_types, enabled, description, secret, created_by)
       VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8, $9)
       RETURNING ${COLUMNS}`,
      [id, owner.partnerId, owner.orgId, w.url, w.eventTypes, w.enabled, w.description, sealedSecret, createdBy],
    );
    return row!;
  }

  /** Enabling clears the failure run and the disabling; disabling by hand records it. */
  update(id: string, w: SubscriptionWrite): Promise<WebhookSubscriptionRow | null> {
    return this.db.one<WebhookSubscriptionRow>(
      `UPDATE webhook_subscriptions
          SET url = $2, event_types = $3::text[], description = $5, updated_at = now(),
              failing_since = CASE WHEN $4::boolean AND NOT enabled THEN NULL ELSE failing_since END,
              disabled_at = CASE WHEN $4::boolean THEN NULL WHEN enabled THEN now() ELSE disabled_at END,
              disabled_reason = CASE WHEN $4::boolean THEN NULL WHEN enabled THEN 'manual' ELSE disabled_reason END,
              enabled = $4::boolean
        WHERE id = $1
        RETURNING ${COLUMNS}`,
      [id, w.url, w.eventTypes, w.enabled, w.description],
    );
  }

  /** The current secret (sealed), to be kept as the previous one during the overlap. */
  async sealedSecret(id: string): Promise<string | null> {
    const row = await this.db.one<{ secret: string }>(`SELECT secret FROM webhook_subscriptions WHERE id = $1`, [id]);
    return row?.secret ?? null;
  }

  rotate(id: string, sealedNew: string, sealedPrevious: string | null, overlapMinutes: number): Promise<WebhookSubscriptionRow | null> {
    return this.db.one<WebhookSubscriptionRow>(
      `UPDATE webhook_subscriptions
          SET secret = $2, previous_secret = $3,
              previous_secret_expires_at = CASE WHEN $3::text IS NULL THEN NULL ELSE now() + make_interval(mins => $4::int) END,
              secret_rotated_at = now(), updated_at = now()
        WHERE id = $1
        RETURNING ${COLUMNS}`,
      [id, sealedNew, sealedPrevious, overlapMinutes],
    );
  }

  /** The subscription, its outbox and its delivery log, in one statement. */
  async delete(id: string): Promise<number> {
    const [row] = await this.db.rows<{ n: number }>(
      `WITH messages AS (DELETE FROM webhook_messages WHERE subscription_id = $1),
            deliveries AS (DELETE FROM webhook_deliveries WHERE subscription_id = $1),
            subscription AS (DELETE FROM webhook_subscriptions WHERE id = $1 RETURNING id)
       SELECT count(*)::int AS n FROM subscription`,
      [id],
    );
    return row.n;
  }

  async deliveries(subscriptionId: string, f: { messageId?: string; limit: number; offset: number }): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
    const rows = await this.db.rows<WebhookDeliveryRow & { total: number }>(
      `SELECT id, message_id, event_type, attempt, manual, attempted_at, duration_ms, status_code, outcome, failure_reason, failure_message,
              count(*) OVER ()::int AS total
         FROM webhook_deliveries
        WHERE subscription_id = $1 AND ($2::uuid IS NULL OR message_id = $2)
        ORDER BY attempted_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [subscriptionId, f.messageId ?? null, f.limit, f.offset],
    );
    if (rows.length || f.offset === 0) return { rows, total: rows[0]?.total ?? 0 };
    const [count] = await this.db.rows<{ total: number }>(
      `SELECT count(*)::int AS total FROM webhook_deliveries WHERE subscription_id = $1 AND ($2::uuid IS NULL OR message_id = $2)`,
      [subscriptionId, f.messageId ?? null],
    );
    return { rows: [], total: count.total };
  }

  /**
   * Queues a message of the subscription again, now, with a fresh retry window; its next attempt is
   * logged as manual. Its id, the `webhook-id`, stays the same. Null when the subscription has no
   * such message.
   */
  redeliver(subscriptionId: string, messageId: string, windowHours: number): Promise<WebhookMessageRow | null> {
    return this.db.one<WebhookMessageRow>(
      `UPDATE webhook_messages
          SET status = 'pending', next_attempt_at = now(), retry_until = now() + make_interval(hours => $3::int), manual = true
        WHERE id = $2 AND subscription_id = $1
        RETURNING id, event_type, status, attempts, next_attempt_at, retry_until, created_at`,
      [subscriptionId, messageId, windowHours],
    );
  }
}
