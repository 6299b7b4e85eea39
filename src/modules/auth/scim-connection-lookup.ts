/** A SCIM connection found by its token, with the state of the administrator whose authority it uses. */
export interface ScimConnectionPrincipalRow {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  acting_user_id: string | null;
  acting_user_status: string | null;
}

/**
 * The port through which principal resolution finds a SCIM connection by its token hash, marking
 * its last use in the same statement. scim_connections belongs to the scim module, which supplies
 * the implementation (ScimConnectionLookupRepository) through its global ScimLookupModule:
 * ScimModule imports AuthModule, so AuthModule cannot import it.
 */
export abstract class ScimConnectionLookup {
  abstract byTokenHash(tokenHash: string): Promise<ScimConnectionPrincipalRow | null>;
}
