/**
 * The port through which a module that changes what a caller may do (a membership, an accepted
 * invitation, a role's permissions) drops the callers this instance has resolved and cached.
 * The database announces such changes to every instance when they commit; forgetting here as
 * well makes the change immediate on the instance that made it. `common/` owns the shape; the
 * auth module supplies the implementation (`PrincipalResolverService`, through its global
 * `PrincipalCacheModule`), so tenancy imports nothing of auth, which sits above it.
 */
export abstract class PrincipalCache {
  /** Every credential acting for this person: their sessions and the API keys they created. */
  abstract forgetUser(userId: string): void;
  /** After a change that may touch many callers at once (a role's permissions). */
  abstract forgetAll(): void;
}
