import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PAM request lifecycle (spec P3, docs/pam-lifecycle.md): the transition log, agent commands,
 * technicians' phones, mobile approval requests and the push outbox.
 *
 * - elevation_requests gains the names of the people who decided or revoked it, copied at
 *   decision time: an organization user may not be allowed to read a partner technician's user
 *   row, and the list must still show who approved.
 * - Two partial indexes on elevation_requests do not lead with org_id: the expiry sweeper looks
 *   across every organization for rows past their deadline, and with org_id leading it would
 *   have to visit every organization's slice of the index.
 * - pam_elevation_events is append-only for the application (no UPDATE or DELETE grant).
 * - device_commands allows one live (queued or delivered) actuation per request; a second one
 *   exists only after the first has failed.
 * - mobile_devices belong to a user, not a tenant: a technician's phone serves every
 *   organization they reach. The push token is sealed; its HMAC deduplicates registrations.
 * - pam_approval_requests are read per approver across organizations (GET /approvals), hence
 *   the approver-leading partial index.
 */
export class PamLifecycle1763700530000 implements MigrationInterface {
  name = 'PamLifecycle1763700530000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE elevation_requests
        ADD COLUMN approved_by_name varchar(255),
        ADD COLUMN denied_by_name varchar(255),
        ADD COLUMN revoked_by_name varchar(255),
        ADD COLUMN revoked_at timestamptz;
      CREATE INDEX elevation_requests_pending_deadline_idx ON elevation_requests (requested_at) WHERE status = 'pending';
      CREATE INDEX elevation_requests_active_deadline_idx ON elevation_requests (expires_at)
        WHERE status IN ('approved', 'auto_approved', 'actuating');
      CREATE INDEX elevation_requests_org_flow_idx ON elevation_requests (org_id, flow_type, requested_at DESC);

      CREATE TABLE pam_elevation_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL,
        elevation_request_id uuid NOT NULL,
        type varchar(32) NOT NULL CHECK (type IN (
          'created', 'approved', 'denied', 'revoked', 'expired',
          'actuation_claimed', 'actuation_completed', 'actuation_failed')),
        from_status varchar(16)
          CHECK (from_status IN ('pending', 'approved', 'auto_approved', 'denied', 'expired', 'revoked', 'actuating')),
        to_status varchar(16) NOT NULL
          CHECK (to_status IN ('pending', 'approved', 'auto_approved', 'denied', 'expired', 'revoked', 'actuating')),
        actor_type varchar(16) NOT NULL CHECK (actor_type IN ('user', 'api_key', 'agent', 'system')),
        actor_id uuid,
        details jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
        created_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (org_id, elevation_request_id) REFERENCES elevation_requests(org_id, id)
      );
      CREATE INDEX pam_elevation_events_request_idx ON pam_elevation_events (org_id, elevation_request_id, created_at);

      CREATE TABLE device_commands (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL,
        device_id uuid NOT NULL,
        type varchar(32) NOT NULL CHECK (type IN ('actuate_elevation', 'revoke_elevation')),
        payload jsonb NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
        status varchar(16) NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'delivered', 'completed', 'failed')),
        elevation_request_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz,
        completed_at timestamptz,
        error varchar(2000),
        UNIQUE (org_id, id),
        FOREIGN KEY (org_id, device_id) REFERENCES devices(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (org_id, elevation_request_id) REFERENCES elevation_requests(org_id, id)
      );
      CREATE INDEX device_commands_queue_idx ON device_commands (org_id, device_id, created_at) WHERE status = 'queued';
      CREATE INDEX device_commands_request_idx ON device_commands (org_id, elevation_request_id);
      CREATE UNIQUE INDEX device_commands_one_live_actuation_idx ON device_commands (org_id, elevation_request_id)
        WHERE type = 'actuate_elevation' AND status IN ('queued', 'delivered');

      CREATE TABLE mobile_devices (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        platform varchar(16) NOT NULL CHECK (platform IN ('ios', 'android')),
        push_token text NOT NULL,
        push_token_hmac varchar(64) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (user_id, push_token_hmac)
      );

      CREATE TABLE pam_approval_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL,
        elevation_request_id uuid NOT NULL,
        approver_user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        status varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
        expires_at timestamptz NOT NULL,
        decided_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (org_id, id),
        UNIQUE (org_id, elevation_request_id, approver_user_id),
        FOREIGN KEY (org_id, elevation_request_id) REFERENCES elevation_requests(org_id, id)
      );
      CREATE INDEX pam_approval_requests_approver_idx ON pam_approval_requests (approver_user_id, expires_at) WHERE status = 'pending';

      CREATE TABLE push_outbox (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL,
        approval_request_id uuid NOT NULL,
        mobile_device_id uuid NOT NULL REFERENCES mobile_devices(id) ON DELETE CASCADE,
        status varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
        attempts int NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz,
        last_error varchar(500),
        created_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (org_id, approval_request_id) REFERENCES pam_approval_requests(org_id, id) ON DELETE CASCADE
      );
      CREATE INDEX push_outbox_due_idx ON push_outbox (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX push_outbox_approval_idx ON push_outbox (org_id, approval_request_id);

      ALTER TABLE pam_elevation_events ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON pam_elevation_events USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE device_commands ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON device_commands USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE mobile_devices ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY own ON mobile_devices USING (app_is_system() OR user_id = app_current_user_id())
        WITH CHECK (app_is_system() OR user_id = app_current_user_id());
      ALTER TABLE pam_approval_requests ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON pam_approval_requests USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));
      ALTER TABLE push_outbox ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON push_outbox USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));

      GRANT SELECT, INSERT ON pam_elevation_events TO app_user;
      GRANT SELECT, INSERT, UPDATE ON device_commands, pam_approval_requests, push_outbox TO app_user;
      GRANT SELECT, INSERT, UPDATE, DELETE ON mobile_devices TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE push_outbox;
      DROP TABLE pam_approval_requests;
      DROP TABLE mobile_devices;
      DROP TABLE device_commands;
      DROP TABLE pam_elevation_events;
      DROP INDEX elevation_requests_org_flow_idx;
      DROP INDEX elevation_requests_active_deadline_idx;
      DROP INDEX elevation_requests_pending_deadline_idx;
      ALTER TABLE elevation_requests
        DROP COLUMN revoked_at, DROP COLUMN revoked_by_name, DROP COLUMN denied_by_name, DROP COLUMN approved_by_name;
    `);
  }
}
