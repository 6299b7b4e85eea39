import { randomInt } from 'node:crypto';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { SecretBoxService } from '../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { JobsService } from '../../infra/jobs/jobs.service';
import { SafeFetchError } from '../../infra/net/net.errors';
import { AuditService } from '../audit/audit.service';
import { nextAttemptAt } from './webhook-backoff.util';
import { AttemptOutcome, ClaimedMessage, WebhookDeliveryRepository } from './webhook-delivery.repository';
import { WebhookHttpService } from './webhook-http.service';
import { currentSecretContext, previousSecretContext } from './webhook-secrets';
import { signedHeaders } from './webhook-signing.util';

/** The pg-boss queue of delivery runs: one run per WEBHOOK_ROUND_SECONDS slot across every instance. */
export const WEBHOOK_DELIVERY_QUEUE = 'webhook_delivery';
export const WEBHOOK_ROUND_SECONDS = 1;
/** Attempts in flight on one instance, and for one subscription. */
export const WEBHOOK_CONCURRENCY = 512;
export const WEBHOOK_PER_SUBSCRIPTION = 256;
const CLAIM_BATCH = 200;
/** Attempts started in one turn of the event loop before it answers what else has arrived. */
const STARTS_PER_TURN = 8;
/** How long a run keeps claiming before it hands over to the next slot's run. */
const RUN_BUDGET_MS = 45_000;
/** Outcomes are written in batches: at this many, or when the oldest has waited this long. */
const FLUSH_AT = 100;
const FLUSH_AFTER_MS = 200;
/** When nothing was due but attempts are in flight, look again after this long. */
const IDLE_POLL_MS = 100;
/** A subscription is disabled once every attempt for this long has failed (docs/operations.md, "Webhooks"). */
export const WEBHOOK_DISABLE_AFTER_HOURS = 24;

/** What the delivery log says of an attempt the receiver did not accept. */
export function failureOf(error: unknown): { reason: string; message: string; status: number | null } {
  if (!(error instanceof SafeFetchError)) return { reason: 'connection_failed', message: 'The request could not be completed', status: null };
  switch (error.reason) {
    case 'private_address':
    case 'dns_failure':
      // One reason for both: told apart, they would let a tenant ask the service's resolver which
      // internal names exist (docs/security.md). The server log keeps the precise one.
      return { reason: 'unreachable_address', message: 'The host does not resolve to a public address (it resolves to a private or reserved one, or not at all)', status: null };
    case 'redirect':
      return { reason: 'redirect', message: `The receiver answered with a redirect (HTTP ${error.status ?? '3xx'}), which is never followed`, status: error.status ?? null };
    case 'timeout':
      return { reason: 'timeout', message: 'The receiver did not answer in time', status: null };
    case 'too_large':
      return { reason: 'too_large', message: 'The receiver answered with a body over 64 KB', status: null };
    case 'insecure_scheme':
      return { reason: 'insecure_scheme', message: 'Only https URLs are called', status: null };
    case 'invalid_url':
      return { reason: 'invalid_url', message: 'The URL cannot be called', status: null };
    default:
      return { reason: 'connection_failed', message: 'The connection to the receiver failed or was closed before it answered', status: null };
  }
}

/**
 * Delivers webhook messages from the outbox (webhook_messages) after the transactions that queued
 * them committed, always out of band: no request waits on a receiver. Each run claims due messages
 * in short system-context transactions, sends up to WEBHOOK_CONCURRENCY at once (at most
 * WEBHOOK_PER_SUBSCRIPTION of one subscription, so one slow receiver cannot hold every slot) through
 * the SSRF-safe client, and writes the outcomes in batches: the message's state, a delivery-log row,
 * the subscription's failure run and, after 24 hours of failures only, its disabling with an audit
 * row. Retries follow webhook-backoff.util for 24 hours; every attempt of a message carries its id as
 * `webhook-id`. Safe on any number of instances: claims use SKIP LOCKED and a lease.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(WebhookDeliveryWorker.name);
  private running: Promise<number> | null = null;
  private stopping = false;

  constructor(
    private readonly repo: WebhookDeliveryRepository,
    private readonly net: WebhookHttpService,
    private readonly box: SecretBoxService,
    private readonly tx: TenantTransactionService,
    private readonly jobs: JobsService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    void this.jobs.every(WEBHOOK_DELIVERY_QUEUE, WEBHOOK_ROUND_SECONDS, () => this.runOnce(), { expireInSeconds: 120 });
  }

  /** Stops claiming and resolves once the attempts under way on this instance have been recorded. */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  /** One run: claims and sends until nothing is due (or the run's budget is spent); resolves to the number of attempts made. */
  runOnce(): Promise<number> {
    this.running ??= this.drain()
      .catch((error: unknown) => {
        this.logger.error({ err: error }, 'Webhook delivery failed');
        return 0;
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async drain(): Promise<number> {
    const deadline = Date.now() + RUN_BUDGET_MS;
    const leaseSeconds = Math.ceil(this.config.webhookTimeoutMs / 1000) + 30;
    const inFlight = new Set<Promise<void>>();
    const perSubscription = new Map<string, number>();
    const done: AttemptOutcome[] = [];
    let oldest = 0;
    let attempts = 0;

    const flush = async () => {
      if (done.length === 0) return;
      const batch = done.splice(0);
      oldest = 0;
      await this.record(batch);
    };
    const start = (m: ClaimedMessage) => {
      perSubscription.set(m.subscription_id, (perSubscription.get(m.subscription_id) ?? 0) + 1);
      const p: Promise<void> = this.attempt(m).then((o) => {
        done.push(o);
        if (oldest === 0) oldest = Date.now();
        inFlight.delete(p);
        const left = (perSubscription.get(m.subscription_id) ?? 1) - 1;
        if (left > 0) perSubscription.set(m.subscription_id, left);
        else perSubscription.delete(m.subscription_id);
      });
      inFlight.add(p);
      attempts++;
    };

    while (!this.stopping && Date.now() < deadline) {
      const free = WEBHOOK_CONCURRENCY - inFlight.size;
      let claimed: ClaimedMessage[] = [];
      if (free > 0) {
        const full = [...perSubscription].filter(([, n]) => n >= WEBHOOK_PER_SUBSCRIPTION).map(([id]) => id);
        claimed = await this.tx.withSystemContext('claim due webhook messages of every tenant', () =>
          this.repo.claim(Math.min(free, CLAIM_BATCH), WEBHOOK_PER_SUBSCRIPTION, full, leaseSeconds),
        );
        // A few at a time, letting the event loop answer requests in between: each attempt's start
        // (signing, a socket, the request) is small, but two hundred in one turn would hold an ingest
        // that arrived meanwhile for tens of milliseconds.
        for (let i = 0; i < claimed.length; i++) {
          if (i > 0 && i % STARTS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
          start(claimed[i]);
        }
      }
      if (claimed.length === 0 && inFlight.size === 0) break;
      if (claimed.length === 0 || inFlight.size >= WEBHOOK_CONCURRENCY) await Promise.race([...inFlight, sleep(IDLE_POLL_MS)]);
      if (done.length >= FLUSH_AT || (oldest > 0 && Date.now() - oldest >= FLUSH_AFTER_MS)) await flush();
    }
    await Promise.all(inFlight);
    await flush();
    return attempts;
  }

  private async record(outcomes: AttemptOutcome[]): Promise<void> {
    await this.tx.withSystemContext('record webhook delivery attempts of every tenant', async () => {
      const disabled = await this.repo.record(outcomes, WEBHOOK_DISABLE_AFTER_HOURS);
      await this.audit.recordMany(
        disabled.map((s) => ({
          action: 'webhook.subscription.disabled',
          orgId: s.org_id,
          partnerId: s.partner_id,
          resourceType: 'webhook_subscription',
          resourceId: s.id,
          actor: { type: 'system', id: null },
          details: { reason: 'failing_24h', failingSince: s.failing_since.toISOString(), disableAfterHours: WEBHOOK_DISABLE_AFTER_HOURS },
        })),
      );
    });
  }

  private async attempt(m: ClaimedMessage): Promise<AttemptOutcome> {
    const attemptedAt = new Date();
    const base = { id: m.id, subscriptionId: m.subscription_id, partnerId: m.partner_id, orgId: m.org_id, eventType: m.event_type, attempt: m.attempts, manual: m.manual, attemptedAt };
    const failed = (reason: string, message: string, statusCode: number | null): AttemptOutcome => {
      const next = nextAttemptAt(m.attempts, new Date(), new Date(m.retry_until), randomInt(1000) / 1000);
      return { ...base, durationMs: Date.now() - attemptedAt.getTime(), statusCode, kind: next ? 'retry' : 'dead', nextAttemptAt: next, failureReason: reason, failureMessage: message };
    };
    let secrets: string[];
    try {
      secrets = [this.box.decrypt(m.secret, currentSecretContext(m.subscription_id))];
      if (m.previous_secret) secrets.push(this.box.decrypt(m.previous_secret, previousSecretContext(m.subscription_id)));
    } catch {
      return failed('secret_unreadable', 'The signing secret cannot be decrypted (was SECRET_ENCRYPTION_KEY changed without keeping the old one?)', null);
    }
    const body = JSON.stringify(m.payload);
    try {
      const res = await this.net.http.request(m.url, { method: 'POST', headers: signedHeaders(m.id, body, secrets, attemptedAt), body });
      if (res.status >= 200 && res.status <= 299) {
        return { ...base, durationMs: Date.now() - attemptedAt.getTime(), statusCode: res.status, kind: 'delivered', nextAttemptAt: null, failureReason: null, failureMessage: null };
      }
      return failed('http_status', `The receiver answered HTTP ${res.status}`, res.status);
    } catch (error) {
      const f = failureOf(error);
      this.logger.debug({ subscriptionId: m.subscription_id, messageId: m.id, reason: error instanceof SafeFetchError ? error.reason : 'unknown' }, 'Webhook attempt failed');
      return failed(f.reason, f.message, f.status);
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
