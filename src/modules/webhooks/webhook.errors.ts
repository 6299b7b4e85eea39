import { AppException } from '../../common/errors/app.exception';

export const WebhookErrors = {
  notFound: () => AppException.notFound('Webhook subscription not found'),
  messageNotFound: () => AppException.notFound('Webhook message not found'),
  invalidField: (field: string, message: string) => AppException.validation([{ field, message }]),
  partnerScopeRequired: (what: string) => AppException.forbidden('partner_scope_required', `${what} needs a partner-scope session`),
  tooMany: (limit: number) => AppException.badRequest('webhook_subscription_limit', `An owner has at most ${limit} webhook subscriptions`, { limit }),
  disabled: () => AppException.conflict('webhook_subscription_disabled', 'The subscription is disabled: enable it before redelivering'),
};
