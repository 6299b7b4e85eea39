import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A write must not commit after the credential it was made with has been revoked (issue 16:
 * "a user deactivated while requests with their token are in flight: none succeeds after the
 * deactivation commits"). The caller is authenticated before its transaction opens, so the first
 * statement of a write's transaction calls app_credential_live: it locks the caller's session or
 * API key row FOR SHARE while checking it is still live. Every revocation (SCIM deprovisioning,
 * logout, password change, key revocation) updates that row, which conflicts with the lock:
 *  - the write locked first: the revocation waits until the write has committed, so the write
 *    is there before the revocation and is ended with the rest (a filed request revoked, a key
 *    it created revoked);
 *  - the revocation updated first: the lock waits for it to commit, then PostgreSQL re-reads the
 *    row (read committed) and finds it revoked: the function answers false and the request is
 *    refused before it has written anything.
 * A PL/pgSQL function, like the other hot-path statements (migration 1763700800000), so its plans
 * stay cached on the server connection behind any pooler. SECURITY INVOKER: the caller sees its
 * own session (sessions are readable by their user) or its own key (readable in its owner's scope).
 */
export class WriteCredentialCheck1763700971000 implements MigrationInterface {
  name = 'WriteCredentialCheck1763700971000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION app_credential_live(p_session uuid, p_key uuid) RETURNS boolean
        LANGUAGE plpgsql AS $f$
      BEGIN
        IF p_session IS NOT NULL THEN
          PERFORM 1 FROM sessions WHERE id = p_session AND revoked_at IS NULL FOR SHARE;
          IF NOT FOUND THEN RETURN false; END IF;
        END IF;
        IF p_key IS NOT NULL THEN
          PERFORM 1 FROM api_keys WHERE id = p_key AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) FOR SHARE;
          IF NOT FOUND THEN RETURN false; END IF;
        END IF;
        RETURN true;
      END
      $f$;
      GRANT EXECUTE ON FUNCTION app_credential_live(uuid, uuid) TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION app_credential_live(uuid, uuid);`);
  }
}
