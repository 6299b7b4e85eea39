import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SCIM 2.0 provisioning (issue 16, items 1 and 2).
 *
 * - `scim_connections`: one bearer credential per organization or partner, stored as SHA-256. It
 *   acts with the authority of `acting_user_id` (the administrator who created it or last rotated
 *   its token), re-checked on every request. Partner-owned rows carry the partner-wide write guard.
 * - `scim_users`: the users a connection manages, with the IdP's `externalId` and SCIM `active`.
 * - `scim_groups`, `scim_group_members`: groups pushed by the IdP.
 * - `group_role_mappings`: (IdP group → role [+ sites]) of an SSO provider or a SCIM connection.
 * - `suspended_at` on both membership tables: a deprovisioned membership keeps its role (so
 *   re-activation restores sign-in) but grants nothing: the caller lookups and sign-in skip it.
 * - `scim_deprovision_user`: ends, in the caller's transaction, every credential and privileged
 *   grant of one user in one organization or partner.
 */
export class ScimProvisioning1763700930000 implements MigrationInterface {
  name = 'ScimProvisioning1763700930000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE organization_memberships ADD COLUMN suspended_at timestamptz;
      ALTER TABLE partner_memberships ADD COLUMN suspended_at timestamptz;

      CREATE TABLE scim_connections (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        token_prefix varchar(16) NOT NULL,
        token_hash varchar(64) NOT NULL UNIQUE,
        default_role_id uuid REFERENCES roles(id) ON DELETE SET NULL,
        acting_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        rotated_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz,
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        UNIQUE (id, org_id),
        UNIQUE (id, partner_id)
      );
      CREATE INDEX scim_connections_org_idx ON scim_connections (org_id, created_at);
      CREATE INDEX scim_connections_partner_idx ON scim_connections (partner_id, created_at);

      CREATE TABLE scim_users (
        connection_id uuid NOT NULL REFERENCES scim_connections(id) ON DELETE CASCADE,
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        external_id varchar(255),
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (connection_id, user_id),
        CHECK ((org_id IS NULL) <> (partner_id IS NULL))
      );
      CREATE UNIQUE INDEX scim_users_external_idx ON scim_users (connection_id, external_id) WHERE external_id IS NOT NULL;
      CREATE INDEX scim_users_user_idx ON scim_users (user_id);

      CREATE TABLE scim_groups (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        connection_id uuid NOT NULL REFERENCES scim_connections(id) ON DELETE CASCADE,
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        display_name varchar(255) NOT NULL CHECK (length(display_name) >= 1),
        external_id varchar(255),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((org_id IS NULL) <> (partner_id IS NULL))
      );
      CREATE UNIQUE INDEX scim_groups_name_idx ON scim_groups (connection_id, lower(display_name));

      CREATE TABLE scim_group_members (
        group_id uuid NOT NULL REFERENCES scim_groups(id) ON DELETE CASCADE,
        connection_id uuid NOT NULL,
        org_id uuid,
        partner_id uuid,
        user_id uuid NOT NULL,
        PRIMARY KEY (group_id, user_id),
        FOREIGN KEY (connection_id, user_id) REFERENCES scim_users(connection_id, user_id) ON DELETE CASCADE
      );
      CREATE INDEX scim_group_members_user_idx ON scim_group_members (connection_id, user_id);

      CREATE TABLE group_role_mappings (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        provider_id uuid REFERENCES sso_providers(id) ON DELETE CASCADE,
        connection_id uuid REFERENCES scim_connections(id) ON DELETE CASCADE,
        position int NOT NULL CHECK (position >= 0),
        idp_group varchar(255) NOT NULL CHECK (length(idp_group) >= 1),
        role_id uuid NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
        site_ids uuid[],
        set_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        CHECK ((provider_id IS NULL) <> (connection_id IS NULL))
      );
      CREATE INDEX group_role_mappings_provider_idx ON group_role_mappings (provider_id, position) WHERE provider_id IS NOT NULL;
      CREATE INDEX group_role_mappings_connection_idx ON group_role_mappings (connection_id, position) WHERE connection_id IS NOT NULL;
    `);

    for (const table of ['scim_connections', 'scim_users', 'scim_groups', 'scim_group_members', 'group_role_mappings']) {
      await q.query(`
        ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant ON ${table} USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));
        CREATE POLICY partner_wide_insert ON ${table} AS RESTRICTIVE FOR INSERT WITH CHECK (app_has_owner_write(org_id, partner_id));
        CREATE POLICY partner_wide_update ON ${table} AS RESTRICTIVE FOR UPDATE USING (true) WITH CHECK (app_has_owner_write(org_id, partner_id));
        CREATE TRIGGER partner_wide_write BEFORE INSERT OR UPDATE OR DELETE ON ${table}
          FOR EACH ROW EXECUTE FUNCTION app_guard_partner_wide_write();
        GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO app_user;
      `);
    }
    // A partner connection's token is a credential of the whole partner, like a partner-wide key.
    await q.query(`
      CREATE POLICY partner_wide_visible ON scim_connections AS RESTRICTIVE FOR SELECT
        USING (org_id IS NOT NULL OR app_has_partner_write(partner_id));
    `);

    // The caller lookups and password sign-in skip suspended memberships.
    await q.query(`
      CREATE INDEX organization_memberships_live_idx ON organization_memberships (user_id) WHERE suspended_at IS NULL;
    `);

    /*
     * Deprovisioning in one statement list, in the caller's transaction (SECURITY INVOKER; the
     * service calls it in system context because sessions and refresh tokens are readable by
     * their owner and the system only). Scope: one organization (p_org) or one partner and every
     * organization of it (p_partner). Returns the counts and the revoked session ids (the service
     * drops them from the principal cache after the commit).
     */
    await q.query(`
      CREATE FUNCTION ${SCIM_DEPROVISION_USER}
      GRANT EXECUTE ON FUNCTION scim_deprovision_user(uuid, uuid, uuid, text) TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION scim_deprovision_user(uuid, uuid, uuid, text);
      DROP INDEX organization_memberships_live_idx;
      DROP TABLE group_role_mappings, scim_group_members, scim_groups, scim_users, scim_connections;
      ALTER TABLE partner_memberships DROP COLUMN suspended_at;
      ALTER TABLE organization_memberships DROP COLUMN suspended_at;
    `);
  }
}

/**
 * scim_deprovision_user as this migration creates it: the text after CREATE FUNCTION, byte for byte
 * what up() has always run. PamEndElevations1763701500000 replaces it, and its down() restores this.
 */
export const SCIM_DEPROVISION_USER = `scim_deprovision_user(p_user uuid, p_org uuid, p_partner uuid, p_reason text) RETURNS jsonb
      LANGUAGE plpgsql AS $f$
      DECLARE
        v_orgs uuid[];
        v_sessions uuid[];
        v_keys int;
        v_pending int;
        v_elevations int;
        v_revoke_commands int;
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

        -- Requests they filed that nobody decided yet, and grants they approved still in their window.
        WITH target AS (
          SELECT id, org_id, device_id, status AS from_status, actuated_at,
                 CASE WHEN status = 'pending' THEN 'filer_deprovisioned' ELSE 'approver_deprovisioned' END AS why
            FROM elevation_requests
           WHERE org_id = ANY (v_orgs)
             AND ((status = 'pending' AND subject_user_id = p_user)
               OR (status IN ('approved', 'actuating') AND approved_by = p_user AND expires_at > now()))
           FOR UPDATE
        ), revoked AS (
          UPDATE elevation_requests e SET status = 'revoked', revoked_at = now(), revoke_reason = t.why, updated_at = now()
            FROM target t WHERE e.id = t.id
          RETURNING e.id, e.org_id, e.device_id, t.from_status, t.actuated_at, t.why
        ), events AS (
          INSERT INTO pam_elevation_events (org_id, elevation_request_id, type, from_status, to_status, actor_type, details)
          SELECT org_id, id, 'revoked', from_status, 'revoked', 'system', jsonb_build_object('reason', why) FROM revoked
        ), audits AS (
          INSERT INTO audit_logs (org_id, actor_type, action, resource_type, resource_id, details)
          SELECT org_id, 'system', 'pam.elevation.revoke', 'elevation_request', id::text, jsonb_build_object('reason', why, 'fromStatus', from_status)
            FROM revoked
        ), approvals AS (
          UPDATE pam_approval_requests a SET status = 'expired' FROM revoked x
           WHERE a.org_id = x.org_id AND a.elevation_request_id = x.id AND a.status = 'pending'
          RETURNING a.id, a.org_id
        ), pushes AS (
          UPDATE push_outbox o SET status = 'cancelled' FROM approvals a
           WHERE o.org_id = a.org_id AND o.approval_request_id = a.id AND o.status = 'pending'
        ), withdrawn AS (
          UPDATE device_commands c SET status = 'failed', error = 'Elevation revoked before the command was delivered', completed_at = now()
            FROM revoked x
           WHERE c.org_id = x.org_id AND c.elevation_request_id = x.id AND c.type = 'actuate_elevation' AND c.status = 'queued'
        ), commands AS (
          INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id)
          SELECT org_id, device_id, 'revoke_elevation', jsonb_build_object('elevationRequestId', id), id
            FROM revoked WHERE from_status = 'actuating' AND actuated_at IS NOT NULL
          RETURNING id
        )
        SELECT count(*) FILTER (WHERE from_status = 'pending'),
               count(*) FILTER (WHERE from_status <> 'pending'),
               (SELECT count(*) FROM commands)
          INTO v_pending, v_elevations, v_revoke_commands
          FROM revoked;

        RETURN jsonb_build_object(
          'sessionIds', to_jsonb(v_sessions),
          'sessionsRevoked', coalesce(array_length(v_sessions, 1), 0),
          'apiKeysRevoked', v_keys,
          'pendingRequestsRevoked', v_pending,
          'elevationsRevoked', v_elevations,
          'revokeCommandsQueued', v_revoke_commands);
      END $f$;`;
