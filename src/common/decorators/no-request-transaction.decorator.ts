import { SetMetadata } from '@nestjs/common';

export const NO_REQUEST_TRANSACTION = 'request-transaction:none';

/**
 * The handler runs without the request's tenant transaction: its service opens short
 * transactions of its own (TenantTransactionService.run, withSystemContext) around the database steps.
 * Two reasons: the route calls out over the network (IdP, DNS), and no transaction (nor its
 * pooled connection) may be held across that wait; or it answers some refusals with an error
 * whose audit row must still commit, which a request transaction would roll back.
 *
 * Orthogonal to who may call the route (@Auth, @Public, @AgentAuth, @ScimAuth), which still
 * applies; the caller's scope is still in the request context for the service's transactions.
 */
export const NoRequestTransaction = () => SetMetadata(NO_REQUEST_TRANSACTION, true);
