/**
 * The fixed, documented set of webhook event types (docs/api-conventions.md, "Webhooks"). A
 * subscription names some of them; any other name is 400. The audit actions each type is made
 * from are mapped by the database trigger of migration 1763702800000 (`WEBHOOK_EVENT_OF_ACTION`);
 * a unit spec keeps the two lists equal.
 */
export const WEBHOOK_EVENT_TYPES = [
  'elevation.requested',
  'elevation.approved',
  'elevation.denied',
  'elevation.revoked',
  'elevation.expired',
  'elevation.actuated',
  'sso.sign_in_refused',
  'scim.user_deprovisioned',
  'sso.provider_changed',
  'api_key.created',
  'api_key.revoked',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The limits of a subscription (docs/operations.md, "Webhooks"). */
export const WEBHOOK_LIMITS = {
  /** Subscriptions per organization, and per partner for the partner's own. */
  subscriptionsPerOwner: 20,
  urlLength: 2048,
  descriptionLength: 500,
  /** A rotation's overlap: 0 (the old secret stops at once) to 7 days; 24 hours unless told. */
  overlapMinutesMax: 7 * 24 * 60,
  overlapMinutesDefault: 24 * 60,
} as const;
