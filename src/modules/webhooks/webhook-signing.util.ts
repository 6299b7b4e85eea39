import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret: `whsec_` and 32 random bytes in base64, the Standard Webhooks form. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The headers of one delivery attempt, per the Standard Webhooks specification: `webhook-id` (the
 * message id, the same on every attempt), `webhook-timestamp` (seconds, this attempt's) and
 * `webhook-signature`, one `v1,<base64>` per secret, space-separated: the current secret's first,
 * then during a rotation's overlap the previous one's. Signed by the `standardwebhooks` package.
 */
export function signedHeaders(messageId: string, body: string, secrets: readonly string[], at: Date): Record<string, string> {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(messageId, at, body));
  return {
    'content-type': 'application/json',
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
