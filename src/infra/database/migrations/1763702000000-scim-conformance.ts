import { MigrationInterface, QueryRunner } from 'typeorm';
import { SCIM_DEPROVISION_USER_WITH_PAM_CASCADE } from './1763701500000-pam-end-elevations';

/**
 * SCIM conformance (docs/identity-lifecycle.md, "Conformance"):
 * - `scim_users.deleted_at`: after `DELETE /Users/{id}` the connection keeps its record (the
 *   membership stays, suspended, so audit history keeps its person) but answers 404 for it, leaves
 *   it out of every query and counts it for no uniqueness, so an IdP that restores a user by
 *   POSTing it again re-provisions it (RFC 7644 §3.6).
 * - `users.email_lower`, a stored lower(email) with its index, for lookups by address that row-level
 *   security lets use an index (a non-leakproof function on a column is no index condition under it).
 * - deprovisioning also ends the elevations the leaver filed for themself that are still open:
 *   pending, or approved and still in their window (a JIT admin window included), with the revoke
 *   command to the agent for one already applied and an audit row each, besides those they approved.
 */
export class ScimConformance1763702000000 implements MigrationInterface {
  name = 'ScimConformance1763702000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE scim_users ADD COLUMN deleted_at timestamptz;
      -- Lookups by address as a column: under row-level security lower(email) = … is no index condition
      -- (lower is not leakproof), so every SCIM lookup read every user; email_lower = lower($1) is one.
      ALTER TABLE users ADD COLUMN email_lower text GENERATED ALWAYS AS (lower(email)) STORED;
      CREATE INDEX users_email_lower_column_idx ON users (email_lower);
      CREATE OR REPLACE FUNCTION ${SCIM_DEPROVISION_USER_ENDING_OWN_ELEVATIONS}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION ${SCIM_DEPROVISION_USER_WITH_PAM_CASCADE}
      DROP INDEX users_email_lower_column_idx;
      ALTER TABLE users DROP COLUMN email_lower;
      ALTER TABLE scim_users DROP COLUMN deleted_at;
    `);
  }
}

const SCIM_DEPROVISION_USER_ENDING_OWN_ELEVATIONS = `scim_deprovision_user(p_user uuid, p_org uuid, p_partner uuid, p_reason text) RETURNS jsonb
      LANGUAGE plpgsql AS $f$
      DECLARE
        v_orgs uuid[];
        v_sessions uuid[];
        v_keys int;
        v_pending int;
        v_elevations int;
        v_revoke_commands int;
        v_filed uuid[];
        v_approved uuid[];
      BEGIN
        IF (p_org IS NULL) = (p_partner IS NULL) THEN
          RAISE EXCEPTION 'scim_deprovision_user needs exactly one of an organization or a partner' USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF p_org IS NOT NULL THEN
          v_orgs := ARRAY[p_org];
          UPDATE organization_memberships SET suspended_at = coalesce(suspended_at, now()) WHERE org_id = p_org AND user_id = p_user;
        ELSE
          SELECT coalesce(array_agg(id), '{}') INTO v_orgs FROM organizations WHERE partner_id = p_partner;
          UPDATE partner_memberships SET suspended_at = coalesce(suspended_at, now()) WHERE partner_id = p_partner AND user_id = p_user;
        END IF;

        WITH revoked AS (
          UPDATE sessions SET revoked_at = now(), revoked_reason = p_reason
           WHERE user_id = p_user AND revoked_at IS NULL
             AND (org_id = ANY (v_orgs) OR (p_partner IS NOT NULL AND partner_id = p_partner))
          RETURNING id
        ), tokens AS (
          UPDATE refresh_tokens t SET expires_at = least(t.expires_at, now()) FROM revoked r WHERE t.session_id = r.id
        ), codes AS (
          DELETE FROM sso_exchange_codes c USING revoked r WHERE c.session_id = r.id
        )
        SELECT coalesce(array_agg(id), '{}') INTO v_sessions FROM revoked;

        UPDATE api_keys SET revoked_at = now()
         WHERE created_by = p_user AND revoked_at IS NULL
           AND (org_id = ANY (v_orgs) OR (p_partner IS NOT NULL AND partner_id = p_partner));
        GET DIAGNOSTICS v_keys = ROW_COUNT;

        -- Ended by the PAM module's one cascade (app_pam_end_elevations); the audit rows stay here.
        -- Everything the leaver filed that is still open (pending, or granted and in its window), and
        -- every grant they approved still in its window; each ends with the reason that fits.
        SELECT coalesce(array_agg(id) FILTER (WHERE filed), '{}'), coalesce(array_agg(id) FILTER (WHERE NOT filed), '{}')
          INTO v_filed, v_approved FROM (
          SELECT id, subject_user_id IS NOT DISTINCT FROM p_user AS filed FROM elevation_requests
           WHERE org_id = ANY (v_orgs)
             AND ((status = 'pending' AND subject_user_id = p_user)
               OR (status IN ('approved', 'actuating') AND (approved_by = p_user OR subject_user_id = p_user) AND expires_at > now()))
           ORDER BY id
           FOR UPDATE
        ) t;

        WITH ended AS (
          SELECT * FROM app_pam_end_elevations(v_filed, 'revoked', 'filer_deprovisioned', 'filer_deprovisioned')
          UNION ALL
          SELECT * FROM app_pam_end_elevations(v_approved, 'revoked', 'filer_deprovisioned', 'approver_deprovisioned')
        ), audits AS (
          INSERT INTO audit_logs (org_id, actor_type, action, resource_type, resource_id, details)
          SELECT org_id, 'system', 'pam.elevation.revoke', 'elevation_request', id::text, jsonb_build_object('reason', reason, 'fromStatus', from_status)
            FROM ended
        )
        SELECT count(*) FILTER (WHERE from_status = 'pending'),
               count(*) FILTER (WHERE from_status <> 'pending'),
               count(revoke_command_id)
          INTO v_pending, v_elevations, v_revoke_commands
          FROM ended;

        RETURN jsonb_build_object(
          'sessionIds', to_jsonb(v_sessions),
          'sessionsRevoked', coalesce(array_length(v_sessions, 1), 0),
          'apiKeysRevoked', v_keys,
          'pendingRequestsRevoked', v_pending,
          'elevationsRevoked', v_elevations,
          'revokeCommandsQueued', v_revoke_commands);
      END $f$;`;
