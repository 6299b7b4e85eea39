import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { SecretBoxService } from '../../../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../../infra/database/tenant-transaction.service';
import { JobsService } from '../../../../infra/jobs/jobs.service';
import { pushTokenContext } from '../mobile-device.service';
import { retryDelaySeconds } from './push-backoff.util';
import { PushGateway, PushMessage } from './push-gateway';
import { ClaimedPush, PushOutboxRepository, PushOutcome } from './push-outbox.repository';

/** The pg-boss queue of delivery rounds: one round per PUSH_ROUND_SECONDS across every instance. */
export const PUSH_DELIVERY_QUEUE = 'pam_push_delivery';
export const PUSH_ROUND_SECONDS = 2;
export const PUSH_BATCH = 50;
/** Longer than a send can take (the gateway times out after 5 s), so a lease outlives its send. */
export const PUSH_LEASE_SECONDS = 60;

const baseName = (path: string) => path.split(/[\\/]/).pop() || path;

function messageOf(p: ClaimedPush, token: string): PushMessage {
  const what = p.flow_type === 'ai_tool_action' ? `AI tool ${p.tool_name ?? 'action'}` : p.flow_type === 'tech_jit_admin' ? 'Just-in-time admin' : baseName(p.target_executable_path ?? 'a program');
  return {
    platform: p.platform,
    token,
    title: 'Elevation approval requested',
    body: `${what} on ${p.device_hostname ?? 'a device'}`,
    data: { approvalRequestId: p.approval_request_id, elevationRequestId: p.elevation_request_id, orgId: p.org_id, expiresAt: p.approval_expires_at.toISOString() },
  };
}

/**
 * Delivers mobile approval pushes from push_outbox after the transactions that wrote them have
 * committed. Claims and outcomes are short transactions of their own; the network calls happen
 * between them, never inside one. Safe on any number of instances (claims use SKIP LOCKED).
 * pg-boss starts one round per 2-second slot across every instance (JobsService.every). Retries
 * and their backoff are the outbox row's (attempts, next_attempt_at, push-backoff.util): a push
 * that fails is retried by a later round, and one that runs out of attempts ends `failed` with
 * its last error, where an operator can query it.
 */
@Injectable()
export class PushOutboxWorker implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(PushOutboxWorker.name);
  private running: Promise<PushOutcome[]> | null = null;

  constructor(
    private readonly repo: PushOutboxRepository,
    private readonly gateway: PushGateway,
    private readonly box: SecretBoxService,
    private readonly tx: TenantTransactionService,
    private readonly jobs: JobsService,
  ) {}

  onModuleInit(): void {
    void this.jobs.every(PUSH_DELIVERY_QUEUE, PUSH_ROUND_SECONDS, () => this.runOnce(), { expireInSeconds: PUSH_LEASE_SECONDS });
  }

  /** Resolves once the round under way on this instance, if any, has ended. */
  async onModuleDestroy(): Promise<void> {
    await this.running;
  }

  /** One batch; resolves to what happened to each claimed row. */
  runOnce(): Promise<PushOutcome[]> {
    this.running ??= this.deliverBatch()
      .catch((error: unknown) => {
        this.logger.error({ err: error }, 'Push delivery failed');
        return [];
      })
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async deliverBatch(): Promise<PushOutcome[]> {
    const claimed = await this.tx.withSystemContext('claim due mobile approval pushes of every organization', () => this.repo.claim(PUSH_BATCH, PUSH_LEASE_SECONDS));
    if (claimed.length === 0) return [];
    const outcomes = await Promise.all(claimed.map((p) => this.deliver(p)));
    await this.tx.withSystemContext('record the outcome of mobile approval pushes', () => this.repo.record(outcomes));
    return outcomes;
  }

  private async deliver(p: ClaimedPush): Promise<PushOutcome> {
    if (!p.deliverable) return { id: p.id, kind: 'cancelled', error: 'The approval request can no longer be decided' };
    let token: string;
    try {
      token = this.box.decrypt(p.push_token, pushTokenContext(p.mobile_device_id));
    } catch {
      return { id: p.id, kind: 'failed', error: 'The push token cannot be decrypted' };
    }
    const result = await this.gateway.send(messageOf(p, token)).catch((): { ok: false; retryable: true; error: string } => ({ ok: false, retryable: true, error: 'Push gateway failed' }));
    if (result.ok) return { id: p.id, kind: 'delivered' };
    const delay = result.retryable ? retryDelaySeconds(p.attempts) : null;
    if (delay === null) return { id: p.id, kind: 'failed', error: result.error };
    return { id: p.id, kind: 'retry', delaySeconds: delay, error: result.error };
  }
}
