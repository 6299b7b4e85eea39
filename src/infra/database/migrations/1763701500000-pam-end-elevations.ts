import { MigrationInterface, QueryRunner } from 'typeorm';
import { SCIM_DEPROVISION_USER } from './1763700930000-scim-provisioning';

/**
 * One cascade for ending elevations, owned by the PAM module: app_pam_end_elevations moves the given
 * requests (locked by the caller) to expired or revoked and, in the same statement, writes their
 * events, expires their pending mobile approvals, cancels those approvals' undelivered pushes, fails
 * their undelivered actuate commands and queues a revoke_elevation command for each elevation an
 * agent had already applied. The expiry sweep and SCIM deprovisioning (scim_deprovision_user) both
 * call it, instead of each carrying its own copy of the cascade. It runs as the caller: row-level
 * security holds it to the caller's tenants. A pending request ends with the first reason, a granted
 * one with the second.
 */
export class PamEndElevations1763701500000 implements MigrationInterface {
  name = 'PamEndElevations1763701500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION app_pam_end_elevations(p_ids uuid[], p_to text, p_pending_reason text, p_granted_reason text)
      RETURNS TABLE (id uuid, org_id uuid, from_status varchar, reason text, revoke_command_id uuid)
      LANGUAGE sql AS $f$
        WITH target AS (
          SELECT e.id, e.status AS from_status, e.actuated_at,
                 CASE WHEN e.status = 'pending' THEN p_pending_reason ELSE p_granted_reason END AS reason
            FROM elevation_requests e WHERE e.id = ANY (p_ids)
        ), ended AS (
          UPDATE elevation_requests e
             SET status = p_to, updated_at = now(),
                 revoked_at = CASE WHEN p_to = 'revoked' THEN now() ELSE e.revoked_at END,
                 revoke_reason = CASE WHEN p_to = 'revoked' THEN t.reason ELSE e.revoke_reason END
            FROM target t WHERE e.id = t.id
          RETURNING e.id, e.org_id, e.device_id, t.from_status, t.actuated_at, t.reason
        ), events AS (
          INSERT INTO pam_elevation_events (org_id, elevation_request_id, type, from_status, to_status, actor_type, details)
          SELECT x.org_id, x.id, p_to, x.from_status, p_to, 'system', jsonb_build_object('reason', x.reason) FROM ended x
        ), approvals AS (
          UPDATE pam_approval_requests a SET status = 'expired' FROM ended x
           WHERE a.org_id = x.org_id AND a.elevation_request_id = x.id AND a.status = 'pending'
          RETURNING a.id, a.org_id
        ), pushes AS (
          UPDATE push_outbox o SET status = 'cancelled' FROM approvals a
           WHERE o.org_id = a.org_id AND o.approval_request_id = a.id AND o.status = 'pending'
        ), withdrawn AS (
          UPDATE device_commands c SET status = 'failed', error = 'Elevation ' || p_to || ' before the command was delivered', completed_at = now()
            FROM ended x
           WHERE c.org_id = x.org_id AND c.elevation_request_id = x.id AND c.type = 'actuate_elevation' AND c.status = 'queued'
        ), revokes AS (
          INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id)
          SELECT x.org_id, x.device_id, 'revoke_elevation', jsonb_build_object('elevationRequestId', x.id), x.id
            FROM ended x WHERE x.from_status = 'actuating' AND x.actuated_at IS NOT NULL
          RETURNING device_commands.id, device_commands.elevation_request_id
        )
        SELECT x.id, x.org_id, x.from_status, x.reason, r.id FROM ended x LEFT JOIN revokes r ON r.elevation_request_id = x.id
      $f$;
      GRANT EXECUTE ON FUNCTION app_pam_end_elevations(uuid[], text, text, text) TO app_user;

      CREATE OR REPLACE FUNCTION ${SCIM_DEPROVISION_USER_WITH_PAM_CASCADE}    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION ${SCIM_DEPROVISION_USER}
      DROP FUNCTION app_pam_end_elevations(uuid[], text, text, text);
    `);
  }
}

/** scim_deprovision_user as this migration leaves it (the next version's down migration restores it). */
export const SCIM_DEPROVISION_USER_WITH_PAM_CASCADE = `scim_deprovision_user(p_user uuid, p_org uuid, p_partner uuid, p_reason text) RETURNS jsonb
      LANGUAGE plpgsql AS $f$
      DECLARE
        v_orgs uuid[];
        v_sessions uuid[];
        v_keys int;
        v_pending int;
        v_elevations int;
        v_revoke_commands int;
        v_targets uuid[];
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

        -- Requests they filed that nobody decided yet, and grants they approved still in their window,
        -- ended by the PAM module's one cascade (app_pam_end_elevations); the audit rows stay here.
        SELECT coalesce(array_agg(id), '{}') INTO v_targets FROM (
          SELECT id FROM elevation_requests
           WHERE org_id = ANY (v_orgs)
             AND ((status = 'pending' AND subject_user_id = p_user)
               OR (status IN ('approved', 'actuating') AND approved_by = p_user AND expires_at > now()))
           ORDER BY id
           FOR UPDATE
        ) t;

        WITH ended AS (
          SELECT * FROM app_pam_end_elevations(v_targets, 'revoked', 'filer_deprovisioned', 'approver_deprovisioned')
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
