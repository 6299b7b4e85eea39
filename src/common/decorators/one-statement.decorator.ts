import { SetMetadata } from '@nestjs/common';

export const ONE_STATEMENT = 'request-transaction:one-statement';

/**
 * The handler's whole work is one statement: a read, or one function call that does all of its
 * writes itself (the agent's command poll). The statement then runs alone, in one message with
 * the caller's row-level-security settings, as its own implicit transaction: one round trip for
 * the request instead of two (no BEGIN, no COMMIT). A second statement fails the request rather
 * than run outside the first one's transaction, so the mark cannot silently break atomicity.
 *
 * For hot routes only, where the round trip was measured to matter. Writes of a session or API
 * key caller keep the request transaction: their credential is checked live in it first.
 */
export const OneStatement = () => SetMetadata(ONE_STATEMENT, true);
