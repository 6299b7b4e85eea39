import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../common/decorators/api-errors.decorator';
import { Auth, CurrentPrincipal } from '../../common/decorators/auth.decorator';
import type { SuccessDto } from '../../common/pagination.dto';
import type { Principal } from '../../common/principal';
import { UuidParam } from '../../common/pipes/uuid.pipe';
import {
  CreateWebhookSubscriptionDto,
  ListWebhookDeliveriesQueryDto,
  ListWebhookSubscriptionsQueryDto,
  RotateWebhookSecretDto,
  UpdateWebhookSubscriptionDto,
  WebhookDeliveryListDto,
  WebhookRedeliveryResponseDto,
  WebhookSubscriptionListDto,
  WebhookSubscriptionResponseDto,
  WebhookSubscriptionSecretResponseDto,
} from './webhook-subscription.dto';
import { WebhookSubscriptionService } from './webhook-subscription.service';

/** A subscription forwards audit events outward: reading needs `audit:read`, changing also `organizations:write` and MFA. */
const READERS = { permission: 'audit:read' } as const;
const WRITERS = { permission: ['organizations:write', 'audit:read'], mfa: true };

@ApiTags('webhooks')
@Controller('webhooks/subscriptions')
export class WebhookSubscriptionController {
  constructor(private readonly subscriptions: WebhookSubscriptionService) {}

  /**
   * Lists webhook subscriptions: the caller's organizations', and the partner's own for a caller reaching every organization.
   *
   * @remarks Needs `audit:read` and access to every site. Filters: `orgId`, `scope`.
   */
  @Get()
  @Auth(READERS)
  @ApiErrors({ 403: ['site_access_denied'] })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListWebhookSubscriptionsQueryDto): Promise<WebhookSubscriptionListDto> {
    return this.subscriptions.list(principal, query);
  }

  /**
   * Creates a subscription and answers its signing secret (`whsec_…`), the only time it is shown.
   *
   * @remarks Needs `organizations:write`, `audit:read` and an MFA session. `scope: partner` sends the events of every organization
   * of the partner and needs a partner-scope caller reaching all of them. At most 20 subscriptions per organization and per
   * partner (400 `webhook_subscription_limit`); the URL is https, at most 2,048 characters; `eventTypes` are names of the
   * documented set (docs/api-conventions.md, "Webhooks").
   */
  @Post()
  @Auth(WRITERS)
  @ApiErrors({ 400: ['webhook_subscription_limit'], 403: ['partner_scope_required', 'site_access_denied'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateWebhookSubscriptionDto): Promise<WebhookSubscriptionSecretResponseDto> {
    return this.subscriptions.create(principal, dto);
  }

  /**
   * Reads one subscription (never its secret).
   *
   * @remarks Needs `audit:read` and access to every site.
   */
  @Get(':id')
  @Auth(READERS)
  @ApiErrors({ 403: ['site_access_denied'] })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<WebhookSubscriptionResponseDto> {
    return this.subscriptions.get(principal, id);
  }

  /**
   * Changes a subscription's URL, event types, description or enabled state; enabling one the service disabled forgets its failures.
   *
   * @remarks Needs `organizations:write`, `audit:read` and an MFA session.
   */
  @Patch(':id')
  @Auth(WRITERS)
  @ApiErrors({ 403: ['partner_scope_required', 'site_access_denied'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateWebhookSubscriptionDto): Promise<WebhookSubscriptionResponseDto> {
    return this.subscriptions.update(principal, id, dto);
  }

  /**
   * Deletes a subscription with its queued messages and its delivery log.
   *
   * @remarks Needs `organizations:write`, `audit:read` and an MFA session.
   */
  @Delete(':id')
  @Auth(WRITERS)
  @ApiErrors({ 403: ['partner_scope_required', 'site_access_denied'] })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.subscriptions.delete(principal, id);
  }

  /**
   * Replaces the signing secret and answers the new one, once. The old one keeps signing beside it for `overlapMinutes`
   * (default 1,440, at most 10,080; 0 ends it at once): deliveries then carry both signatures.
   *
   * @remarks Needs `organizations:write`, `audit:read` and an MFA session.
   */
  @Post(':id/rotate-secret')
  @HttpCode(200)
  @Auth(WRITERS)
  @ApiErrors({ 403: ['partner_scope_required', 'site_access_denied'] })
  rotate(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: RotateWebhookSecretDto): Promise<WebhookSubscriptionSecretResponseDto> {
    return this.subscriptions.rotate(principal, id, dto);
  }

  /**
   * The delivery log: one row per attempt, newest first (time, status code or failure reason, duration). Kept 30 days.
   *
   * @remarks Needs `audit:read` and access to every site. Filter: `messageId`.
   */
  @Get(':id/deliveries')
  @Auth(READERS)
  @ApiErrors({ 403: ['site_access_denied'] })
  deliveries(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Query() query: ListWebhookDeliveriesQueryDto): Promise<WebhookDeliveryListDto> {
    return this.subscriptions.deliveries(principal, id, query);
  }

  /**
   * Queues a message again, with the same `webhook-id`: it is sent within seconds and retried for 24 hours.
   *
   * @remarks Needs `organizations:write`, `audit:read` and an MFA session. 409 `webhook_subscription_disabled` for a disabled subscription.
   */
  @Post(':id/messages/:messageId/redeliver')
  @HttpCode(202)
  @Auth(WRITERS)
  @ApiErrors({ 403: ['partner_scope_required', 'site_access_denied'], 409: ['webhook_subscription_disabled'] })
  redeliver(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @UuidParam('messageId') messageId: string): Promise<WebhookRedeliveryResponseDto> {
    return this.subscriptions.redeliver(principal, id, messageId);
  }
}
