import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The hot statements of agent ingest as PL/pgSQL functions, so their plans are cached by the
 * server whatever sits between the service and PostgreSQL (docs/architecture.md, prepared
 * statements). Under row-level security, planning these statements costs more than running them
 * (the approval fan-out about 2 ms of planning for 0.6 ms of execution); a named prepared
 * statement keeps the plan only on the client's connection, which a transaction pooler does not
 * keep, whereas PL/pgSQL keeps the plan of each statement of a function for the life of the
 * server connection, whichever client calls it. Each call is one round trip.
 *
 * SECURITY INVOKER (the default): the statements run as the calling role, under its row-level
 * security and the transaction's tenant settings, exactly as the statements they replace.
 * The rate-limit constants come in as arguments, so the service stays their one source.
 */
export class PooledHotPaths1763700800000 implements MigrationInterface {
  name = 'PooledHotPaths1763700800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- Every assignment through which an enabled configuration policy carrying p_feature reaches one device:
      -- partner-wide, its organization, its site, any of its device groups (static or dynamic members alike), or
      -- the device itself. The one definition of policy reach: the policy resolution and ingest both call it.
      CREATE FUNCTION app_applied_policies(p_org uuid, p_site uuid, p_device uuid, p_feature text)
        RETURNS TABLE (policy_id uuid, policy_name text, policy_updated_at timestamptz, level text, priority integer,
                       assigned_at timestamptz, assignment_id uuid, settings jsonb)
        LANGUAGE plpgsql STABLE AS $f$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        SELECT p.id, p.name::text, p.updated_at, a.target_level::text, a.priority, a.created_at, a.id, p.features -> p_feature
          FROM policy_assignments a
          JOIN policies p ON p.id = a.policy_id
         WHERE p.enabled AND p.type = 'configuration' AND p.features ? p_feature
           AND ((a.target_level = 'partner' AND a.org_id IS NULL
                 AND a.partner_id = (SELECT o.partner_id FROM organizations o WHERE o.id = p_org))
             OR (a.org_id = p_org
                 AND (a.target_level = 'organization'
                   OR (a.target_level = 'site' AND a.site_id = p_site)
                   OR (a.target_level = 'device' AND a.device_id = p_device)
                   OR (a.target_level = 'device_group' AND a.device_group_id IN (
                         SELECT m.group_id FROM device_group_members m WHERE m.org_id = p_org AND m.device_id = p_device)))));
      END
      $f$;

      -- Everything ingest needs to know before deciding: the device, the rules version, the organization
      -- defaults and the software policies applied to the device (the caller orders them closest first).
      CREATE FUNCTION app_ingest_context(p_org uuid, p_device uuid)
        RETURNS TABLE (status text, site_id uuid, now timestamptz, rules_version text, default_unmatched_verdict text,
                       default_approval_duration_minutes integer, software json)
        LANGUAGE plpgsql STABLE AS $f$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        SELECT d.status::text, d.site_id, now(),
               coalesce((SELECT v.version::text FROM pam_rules_versions v WHERE v.org_id = d.org_id), '0'),
               c.default_unmatched_verdict::text, c.default_approval_duration_minutes,
               (SELECT coalesce(json_agg(s), '[]') FROM app_applied_policies(p_org, d.site_id, p_device, 'software') s)
          FROM devices d
          LEFT JOIN pam_org_config c ON c.org_id = d.org_id
         WHERE d.org_id = p_org AND d.id = p_device;
      END
      $f$;

      -- Refills the device's bucket and takes one token; a row only when a token was there. One row per
      -- device, updated by a single upsert: concurrent requests of one device queue on the row, so no two
      -- spend the same token, on one instance or many. The clock is read once the row is locked
      -- (clock_timestamp in the update itself), and refilled_at never moves back: a request that waited
      -- for the row must not refill from an instant before the last debit.
      CREATE FUNCTION app_agent_rate_bucket_take(p_org uuid, p_device uuid, p_burst integer, p_rate_per_second double precision)
        RETURNS TABLE (tokens double precision)
        LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        INSERT INTO agent_rate_buckets AS b (org_id, device_id, tokens, refilled_at)
        VALUES (p_org, p_device, p_burst - 1, clock_timestamp())
        ON CONFLICT (org_id, device_id) DO UPDATE
           SET tokens = least(p_burst, b.tokens + p_rate_per_second * greatest(0, extract(epoch FROM clock_timestamp() - b.refilled_at))) - 1,
               refilled_at = greatest(b.refilled_at, clock_timestamp())
         WHERE least(p_burst, b.tokens + p_rate_per_second * greatest(0, extract(epoch FROM clock_timestamp() - b.refilled_at))) >= 1
        RETURNING b.tokens;
      END
      $f$;

      -- The request, its audit row and its created event in one statement; with p_spend_token, the
      -- device's bucket is spent first and nothing is written (no row) when it is empty.
      CREATE FUNCTION app_ingest_insert(
          p_org uuid, p_site uuid, p_device uuid, p_status text, p_subject_username text, p_path text, p_hash text,
          p_signer text, p_parent_image text, p_command_line text, p_pid integer, p_observed_at timestamptz, p_reason text,
          p_final boolean, p_duration_minutes integer, p_decision_source text, p_matched_policy_id uuid, p_matched_policy_name text,
          p_pam_rule_id uuid, p_pam_rule_name text, p_software_evidence jsonb, p_agent_id uuid, p_audit_action text, p_details jsonb,
          p_ip text, p_request_id text, p_spend_token boolean, p_burst integer, p_rate_per_second double precision)
        RETURNS TABLE (id uuid, requested_at timestamptz, expires_at timestamptz)
        LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      BEGIN
        IF p_spend_token AND NOT EXISTS (SELECT 1 FROM app_agent_rate_bucket_take(p_org, p_device, p_burst, p_rate_per_second)) THEN
          RETURN;
        END IF;
        RETURN QUERY
        WITH req AS (
          INSERT INTO elevation_requests (
            org_id, site_id, device_id, flow_type, status, subject_username, target_executable_path, target_executable_hash,
            target_executable_signer, parent_image, command_line, pid, observed_at, reason, requested_at, decided_at,
            duration_minutes, expires_at, decision_source, matched_policy_id, matched_policy_name, pam_rule_id, pam_rule_name, software_evidence)
          VALUES (p_org, p_site, p_device, 'uac_intercept', p_status, p_subject_username, p_path, p_hash, p_signer, p_parent_image,
                  p_command_line, p_pid, p_observed_at, p_reason, now(), CASE WHEN p_final THEN now() END,
                  p_duration_minutes, now() + make_interval(mins => p_duration_minutes), p_decision_source, p_matched_policy_id,
                  p_matched_policy_name, p_pam_rule_id, p_pam_rule_name, p_software_evidence)
          RETURNING elevation_requests.id, elevation_requests.org_id, elevation_requests.status,
                    elevation_requests.requested_at, elevation_requests.expires_at
        ), audit AS (
          INSERT INTO audit_logs (org_id, actor_type, actor_id, action, resource_type, resource_id, details, ip, request_id)
          SELECT req.org_id, 'agent', p_agent_id, p_audit_action, 'elevation_request', req.id::text, p_details, p_ip, p_request_id FROM req
        ), event AS (
          INSERT INTO pam_elevation_events (org_id, elevation_request_id, type, from_status, to_status, actor_type, actor_id, details)
          SELECT req.org_id, req.id, 'created', NULL, req.status, 'agent', p_agent_id, p_details FROM req
        )
        SELECT req.id, req.requested_at, req.expires_at FROM req;
      END
      $f$;

      -- The approval requests and push-outbox rows of a pending request (approval.repository.ts explains who is eligible).
      CREATE FUNCTION app_pam_approval_fan_out(p_org uuid, p_request uuid, p_ttl_minutes integer)
        RETURNS TABLE (approvals bigint, pushes bigint)
        LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        WITH req AS (
               SELECT e.id, e.org_id, e.site_id, e.flow_type, e.subject_user_id, e.requested_at, o.partner_id
                 FROM elevation_requests e JOIN organizations o ON o.id = e.org_id
                WHERE e.org_id = p_org AND e.id = p_request AND e.status = 'pending'
             ), grants AS (
               SELECT m.user_id, r.permissions,
                      (NOT m.site_restricted OR EXISTS (SELECT 1 FROM organization_membership_sites ms
                         WHERE ms.org_id = m.org_id AND ms.user_id = m.user_id AND ms.site_id = req.site_id)) AS site_ok
                 FROM req JOIN organization_memberships m ON m.org_id = req.org_id JOIN roles r ON r.id = m.role_id
               UNION ALL
               SELECT pm.user_id, r.permissions,
                      (NOT pm.site_restricted OR EXISTS (SELECT 1 FROM partner_membership_sites ps
                         WHERE ps.partner_id = pm.partner_id AND ps.user_id = pm.user_id AND ps.site_id = req.site_id)) AS site_ok
                 FROM req JOIN partner_memberships pm ON pm.partner_id = req.partner_id JOIN roles r ON r.id = pm.role_id
                WHERE pm.org_access = 'all' OR EXISTS (SELECT 1 FROM partner_membership_orgs po
                        WHERE po.partner_id = pm.partner_id AND po.user_id = pm.user_id AND po.org_id = req.org_id)
             ), eligible AS (
               SELECT DISTINCT g.user_id FROM grants g
                 JOIN users u ON u.id = g.user_id AND u.status = 'active'
                WHERE g.site_ok AND g.permissions && ARRAY['*', 'devices:*', 'devices:execute']::text[]
                  AND NOT EXISTS (SELECT 1 FROM req WHERE req.subject_user_id = g.user_id)
                  AND EXISTS (SELECT 1 FROM mobile_devices md WHERE md.user_id = g.user_id)
             ), approval_rows AS (
               INSERT INTO pam_approval_requests (org_id, elevation_request_id, approver_user_id, expires_at)
               SELECT req.org_id, req.id, eligible.user_id, req.requested_at + make_interval(mins => p_ttl_minutes) FROM req CROSS JOIN eligible
               ON CONFLICT (org_id, elevation_request_id, approver_user_id) DO NOTHING
               RETURNING pam_approval_requests.id, pam_approval_requests.org_id, pam_approval_requests.approver_user_id
             ), push_rows AS (
               INSERT INTO push_outbox (org_id, approval_request_id, mobile_device_id)
               SELECT a.org_id, a.id, md.id FROM approval_rows a JOIN mobile_devices md ON md.user_id = a.approver_user_id
               RETURNING push_outbox.id
             )
        SELECT (SELECT count(*) FROM approval_rows), (SELECT count(*) FROM push_rows);
      END
      $f$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION app_pam_approval_fan_out(uuid, uuid, integer);
      DROP FUNCTION app_ingest_insert(uuid, uuid, uuid, text, text, text, text, text, text, text, integer, timestamptz, text, boolean,
        integer, text, uuid, text, uuid, text, jsonb, uuid, text, jsonb, text, text, boolean, integer, double precision);
      DROP FUNCTION app_agent_rate_bucket_take(uuid, uuid, integer, double precision);
      DROP FUNCTION app_ingest_context(uuid, uuid);
      DROP FUNCTION app_applied_policies(uuid, uuid, uuid, text);
    `);
  }
}
