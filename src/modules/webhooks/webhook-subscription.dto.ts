import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../common/pagination.dto';
import type { DateTime, Int, Uuid } from '../../common/openapi/formats';
import type { OwnerScope } from '../content/ownership.util';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_LIMITS, type WebhookEventType } from './webhook-event-types';

export class CreateWebhookSubscriptionDto {
  /** partner: events of every organization of the partner (a partner-scope session reaching all of them); organization (default): one organization. */
  @IsOptional() @IsIn(['partner', 'organization']) scope?: OwnerScope;
  /** The organization (organization scope); default the caller's own for an organization session. */
  @IsOptional() @IsUUID() orgId?: string;
  /** An https URL of at most 2,048 characters, without credentials or fragment. */
  @IsString() @MaxLength(WEBHOOK_LIMITS.urlLength) url: string;
  /** One or more of the documented event types, each once. */
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length) @ArrayUnique() @IsIn(WEBHOOK_EVENT_TYPES, { each: true }) eventTypes: WebhookEventType[];
  /** Default true. */
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsString() @MaxLength(WEBHOOK_LIMITS.descriptionLength) description?: string | null;
}

export class UpdateWebhookSubscriptionDto {
  @IsOptional() @IsString() @MaxLength(WEBHOOK_LIMITS.urlLength) url?: string;
  @IsOptional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length) @ArrayUnique() @IsIn(WEBHOOK_EVENT_TYPES, { each: true }) eventTypes?: WebhookEventType[];
  /** true also re-enables a subscription disabled after its failures, and forgets them. */
  @IsOptional() @IsBoolean() enabled?: boolean;
  @IsOptional() @IsString() @MaxLength(WEBHOOK_LIMITS.descriptionLength) description?: string | null;
}

export class RotateWebhookSecretDto {
  /** How long the previous secret still signs beside the new one: 0 to 10,080 minutes (7 days), default 1,440 (24 hours). */
  @IsOptional() @IsInt() @Min(0) @Max(WEBHOOK_LIMITS.overlapMinutesMax) overlapMinutes?: number;
}

export class ListWebhookSubscriptionsQueryDto extends PageQueryDto {
  /** This organization's subscriptions only. */
  @IsOptional() @IsUUID() orgId?: string;
  @IsOptional() @IsIn(['partner', 'organization']) scope?: OwnerScope;
}

export class ListWebhookDeliveriesQueryDto extends PageQueryDto {
  /** The attempts of one message only. */
  @IsOptional() @IsUUID() messageId?: string;
}

export class WebhookSubscriptionDto {
  id: Uuid;
  scope: OwnerScope;
  partnerId: Uuid | null;
  orgId: Uuid | null;
  url: string;
  eventTypes: WebhookEventType[];
  enabled: boolean;
  description: string | null;
  /** Set while a rotation's overlap lasts: until then deliveries carry both signatures. */
  previousSecretExpiresAt: DateTime | null;
  secretRotatedAt: DateTime | null;
  /** Since when every attempt has failed (null after a success). */
  failingSince: DateTime | null;
  disabledAt: DateTime | null;
  /** `failing_24h` when the service disabled it; `manual` when an administrator did. */
  disabledReason: string | null;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class WebhookSubscriptionResponseDto {
  success: true;
  subscription: WebhookSubscriptionDto;
}

/** Answered once, by creation and rotation: the secret is never shown again. */
export class WebhookSubscriptionSecretResponseDto {
  success: true;
  subscription: WebhookSubscriptionDto;
  /** `whsec_…`: verify each delivery's `webhook-signature` with it. Store it now; no answer shows it again. */
  secret: string;
}

export class WebhookSubscriptionListDto {
  success: true;
  subscriptions: WebhookSubscriptionDto[];
  pagination: PaginationDto;
}

export class WebhookDeliveryDto {
  id: Uuid;
  /** The `webhook-id` header of the attempt. */
  messageId: Uuid;
  eventType: WebhookEventType;
  /** 1 for the first attempt of the message. */
  attempt: Int;
  /** Requested through the redeliver route. */
  manual: boolean;
  attemptedAt: DateTime;
  durationMs: Int;
  /** The receiver's HTTP status, when it answered. */
  statusCode: Int | null;
  outcome: 'delivered' | 'failed';
  /** Why it failed: http_status, redirect, timeout, unreachable_address, connection_failed, too_large, insecure_scheme, invalid_url, secret_unreadable. */
  failureReason: string | null;
  failureMessage: string | null;
}

export class WebhookDeliveryListDto {
  success: true;
  deliveries: WebhookDeliveryDto[];
  pagination: PaginationDto;
}

export class WebhookMessageDto {
  id: Uuid;
  eventType: WebhookEventType;
  status: 'pending' | 'delivered' | 'dead';
  attempts: Int;
  nextAttemptAt: DateTime;
  retryUntil: DateTime;
  createdAt: DateTime;
}

export class WebhookRedeliveryResponseDto {
  success: true;
  message: WebhookMessageDto;
}
