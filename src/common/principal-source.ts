import type { Principal } from './principal';

/**
 * The port through which the global AuthGuard turns a bearer credential into the person or device
 * it acts for. `common/` owns the shape; the auth module supplies the implementation
 * (`PrincipalResolverService`), so nothing in `common/` imports a feature module.
 */
export abstract class PrincipalSource {
  /** A session access token or an API key. */
  abstract fromBearer(bearer: string): Promise<Principal | null>;
  /** A SCIM connection's bearer token. */
  abstract fromScimToken(token: string): Promise<Principal | null>;
  /** A device agent's token. */
  abstract fromAgentToken(token: string): Promise<Principal | null>;
}
