/** The associated data a sealed secret is bound to (SecretBoxService): its column and its row. */
export const currentSecretContext = (subscriptionId: string) => `webhook_subscriptions.secret:${subscriptionId}`;
export const previousSecretContext = (subscriptionId: string) => `webhook_subscriptions.previous_secret:${subscriptionId}`;
