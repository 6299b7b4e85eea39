import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../../common/principal';
import type { SuccessDto } from '../../common/pagination.dto';
import { requireOrg, requireSite } from '../../common/tenant-access.util';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { SecretBoxService } from '../../infra/crypto/secret-box.service';
import { AuditService } from '../audit/audit.service';
import { newOwner, Owner, ownerScopeOf, requireOwnerWrite } from '../content/ownership.util';
import { WEBHOOK_RETRY_WINDOW_HOURS } from './webhook-backoff.util';
import { WEBHOOK_LIMITS } from './webhook-event-types';
import { currentSecretContext, previousSecretContext } from './webhook-secrets';
import { newWebhookSecret } from './webhook-signing.util';
import { WebhookErrors } from './webhook.errors';
import { webhookUrlProblem } from './webhook-url.util';
import type {
  CreateWebhookSubscriptionDto,
  ListWebhookDeliveriesQueryDto,
  ListWebhookSubscriptionsQueryDto,
  RotateWebhookSecretDto,
  UpdateWebhookSubscriptionDto,
  WebhookDeliveryListDto,
  WebhookRedeliveryResponseDto,
  WebhookSubscriptionDto,
  WebhookSubscriptionListDto,
  WebhookSubscriptionResponseDto,
  WebhookSubscriptionSecretResponseDto,
} from './webhook-subscription.dto';
import { SubscriptionWrite, WebhookSubscriptionRepository, WebhookSubscriptionRow } from './webhook-subscription.repository';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toDto(r: WebhookSubscriptionRow): WebhookSubscriptionDto {
  return {
    id: r.id,
    scope: ownerScopeOf({ partnerId: r.partner_id, orgId: r.org_id }),
    partnerId: r.partner_id,
    orgId: r.org_id,
    url: r.url,
    eventTypes: r.event_types,
    enabled: r.enabled,
    description: r.description,
    previousSecretExpiresAt: iso(r.previous_secret_expires_at),
    secretRotatedAt: iso(r.secret_rotated_at),
    failingSince: iso(r.failing_since),
    disabledAt: iso(r.disabled_at),
    disabledReason: r.disabled_reason,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

const WHAT = 'webhook subscription';

/**
 * Webhook subscriptions (issue 29, item 3; docs/api-conventions.md, "Webhooks"). A subscription is
 * owned by one organization or by the partner, under the ownership rule every partner-wide object
 * follows (content/ownership.util: a partner subscription needs a partner-scope caller reaching every
 * organization; the database's partner-wide guard enforces it too). It forwards events of every site
 * of its owner, so every route needs a caller who reaches all sites. The signing secret is generated
 * here, sealed at rest, answered once by creation and by rotation, and never read back into an answer.
 */
@Injectable()
export class WebhookSubscriptionService {
  constructor(
    private readonly repo: WebhookSubscriptionRepository,
    private readonly box: SecretBoxService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(principal: Principal, q: ListWebhookSubscriptionsQueryDto): Promise<WebhookSubscriptionListDto> {
    requireSite(principal, null);
    if (q.orgId) requireOrg(principal, q.orgId);
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const { rows, total } = await this.repo.list({ orgId: q.orgId, scope: q.scope, limit, offset: (page - 1) * limit });
    return { success: true, subscriptions: rows.map(toDto), pagination: { page, limit, total } };
  }

  async get(principal: Principal, id: string): Promise<WebhookSubscriptionResponseDto> {
    requireSite(principal, null);
    return { success: true, subscription: toDto(await this.found(id)) };
  }

  async create(principal: Principal, dto: CreateWebhookSubscriptionDto): Promise<WebhookSubscriptionSecretResponseDto> {
    const owner = newOwner(principal, dto.scope, dto.orgId, WHAT);
    const write = this.checked({ url: dto.url, eventTypes: dto.eventTypes, enabled: dto.enabled ?? true, description: dto.description ?? null });
    if ((await this.repo.lockAndCount(owner)) >= WEBHOOK_LIMITS.subscriptionsPerOwner) throw WebhookErrors.tooMany(WEBHOOK_LIMITS.subscriptionsPerOwner);
    const id = randomUUID();
    const secret = newWebhookSecret();
    const row = await this.repo.insert(id, owner, write, this.box.encrypt(secret, currentSecretContext(id)), principal.userId);
    await this.record('webhook.subscription.create', owner, id, { url: row.url, eventTypes: row.event_types, enabled: row.enabled });
    return { success: true, subscription: toDto(row), secret };
  }

  async update(principal: Principal, id: string, dto: UpdateWebhookSubscriptionDto): Promise<WebhookSubscriptionResponseDto> {
    const current = await this.found(id);
    const owner = this.writable(principal, current);
    const write = this.checked({
      url: dto.url ?? current.url,
      eventTypes: dto.eventTypes ?? current.event_types,
      enabled: dto.enabled ?? current.enabled,
      description: dto.description === undefined ? current.description : dto.description,
    });
    const row = await this.repo.update(id, write);
    if (!row) throw WebhookErrors.notFound();
    await this.record('webhook.subscription.update', owner, id, { changed: Object.keys(dto), url: row.url, eventTypes: row.event_types, enabled: row.enabled });
    return { success: true, subscription: toDto(row) };
  }

  async delete(principal: Principal, id: string): Promise<SuccessDto> {
    const current = await this.found(id);
    const owner = this.writable(principal, current);
    await this.repo.delete(id);
    await this.record('webhook.subscription.delete', owner, id, { url: current.url });
    return { success: true };
  }

  /**
   * A new secret; the one it replaces keeps signing beside it for `overlapMinutes` (0: not at all).
   * A rotation during an overlap drops the secret before: two secrets sign at most.
   */
  async rotate(principal: Principal, id: string, dto: RotateWebhookSecretDto): Promise<WebhookSubscriptionSecretResponseDto> {
    const current = await this.found(id);
    const owner = this.writable(principal, current);
    const overlapMinutes = dto.overlapMinutes ?? WEBHOOK_LIMITS.overlapMinutesDefault;
    const sealed = await this.repo.sealedSecret(id);
    if (!sealed) throw WebhookErrors.notFound();
    const previous = overlapMinutes > 0 ? this.box.encrypt(this.box.decrypt(sealed, currentSecretContext(id)), previousSecretContext(id)) : null;
    const secret = newWebhookSecret();
    const row = await this.repo.rotate(id, this.box.encrypt(secret, currentSecretContext(id)), previous, overlapMinutes);
    if (!row) throw WebhookErrors.notFound();
    await this.record('webhook.subscription.rotate_secret', owner, id, { overlapMinutes, previousSecretExpiresAt: iso(row.previous_secret_expires_at) });
    return { success: true, subscription: toDto(row), secret };
  }

  async deliveries(principal: Principal, id: string, q: ListWebhookDeliveriesQueryDto): Promise<WebhookDeliveryListDto> {
    requireSite(principal, null);
    await this.found(id);
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const { rows, total } = await this.repo.deliveries(id, { messageId: q.messageId, limit, offset: (page - 1) * limit });
    return {
      success: true,
      deliveries: rows.map((r) => ({
        id: r.id,
        messageId: r.message_id,
        eventType: r.event_type,
        attempt: r.attempt,
        manual: r.manual,
        attemptedAt: r.attempted_at.toISOString(),
        durationMs: r.duration_ms,
        statusCode: r.status_code,
        outcome: r.outcome,
        failureReason: r.failure_reason,
        failureMessage: r.failure_message,
      })),
      pagination: { page, limit, total },
    };
  }

  /** Sends a message again, with the same `webhook-id`, from now on with a fresh 24-hour retry window. */
  async redeliver(principal: Principal, id: string, messageId: string): Promise<WebhookRedeliveryResponseDto> {
    const current = await this.found(id);
    const owner = this.writable(principal, current);
    if (!current.enabled) throw WebhookErrors.disabled();
    const m = await this.repo.redeliver(id, messageId, WEBHOOK_RETRY_WINDOW_HOURS);
    if (!m) throw WebhookErrors.messageNotFound();
    await this.record('webhook.message.redeliver', owner, id, { messageId, eventType: m.event_type });
    return {
      success: true,
      message: {
        id: m.id,
        eventType: m.event_type,
        status: m.status,
        attempts: m.attempts,
        nextAttemptAt: m.next_attempt_at.toISOString(),
        retryUntil: m.retry_until.toISOString(),
        createdAt: m.created_at.toISOString(),
      },
    };
  }

  private writable(principal: Principal, row: WebhookSubscriptionRow): Owner {
    const owner = { partnerId: row.partner_id, orgId: row.org_id };
    requireOwnerWrite(principal, owner, WHAT);
    return owner;
  }

  private checked(w: SubscriptionWrite): SubscriptionWrite {
    const problem = webhookUrlProblem(w.url, this.config.webhooksAllowInsecureLoopback);
    if (problem) throw WebhookErrors.invalidField('url', problem);
    return w;
  }

  private async found(id: string): Promise<WebhookSubscriptionRow> {
    const row = await this.repo.find(id);
    if (!row) throw WebhookErrors.notFound();
    return row;
  }

  private record(action: string, owner: Owner, id: string, details: Record<string, unknown>): Promise<void> {
    return this.audit.record({ action, ...owner, resourceType: 'webhook_subscription', resourceId: id, details });
  }
}
