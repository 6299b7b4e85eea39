import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit actions that become webhook events, and the event type each becomes (issue 29, item 3;
 * docs/api-conventions.md, "Webhooks"). The audit row is written in the transaction of the change it
 * records, so an event exists exactly when its change committed. Kept here, beside the trigger that
 * reads it, and exported for the tests that check every entry is really written.
 */
export const WEBHOOK_EVENT_OF_ACTION: Readonly<Record<string, string>> = {
  'pam.elevation.request': 'elevation.requested',
  'pam.elevation.approve': 'elevation.approved',
  'pam.elevation.auto_approve': 'elevation.approved',
  'pam.elevation.deny': 'elevation.denied',
  'pam.elevation.auto_deny': 'elevation.denied',
  'pam.elevation.revoke': 'elevation.revoked',
  'pam.elevation.expire': 'elevation.expired',
  'pam.elevation.actuate': 'elevation.actuated',
  'sso.login.rejected': 'sso.sign_in_refused',
  'scim.user.deactivate': 'scim.user_deprovisioned',
  'sso.provider.create': 'sso.provider_changed',
  'sso.provider.update': 'sso.provider_changed',
  'sso.provider.status.update': 'sso.provider_changed',
  'sso.provider.delete': 'sso.provider_changed',
  'sso.saml.sp_settings.update': 'sso.provider_changed',
  'sso.saml.sp_key.rotate': 'sso.provider_changed',
  'api_key.create': 'api_key.created',
  'api_key.revoke': 'api_key.revoked',
};

const TYPES = [...new Set(Object.values(WEBHOOK_EVENT_OF_ACTION))];
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
const ACTIONS = Object.keys(WEBHOOK_EVENT_OF_ACTION).map(literal).join(', ');
const TYPE_OF_ACTION = `CASE NEW.action ${Object.entries(WEBHOOK_EVENT_OF_ACTION)
  .map(([action, type]) => `WHEN ${literal(action)} THEN ${literal(type)}`)
  .join(' ')} END`;

const TABLES = ['webhook_subscriptions', 'webhook_messages', 'webhook_deliveries'] as const;

/**
 * Read side of every webhook table: an organization's rows for the callers of that organization;
 * a partner's rows (which describe events of every organization of the partner) only for callers
 * who reach all of them, as partner-wide API keys and partner audit rows. The scope is read once
 * per statement (migration 1763701700000).
 */
const VISIBLE = `(SELECT app_is_system()) OR CASE WHEN org_id IS NOT NULL THEN org_id = ANY ((SELECT app_org_ids())::uuid[])
  ELSE (SELECT app_partner_wide()) AND partner_id IS NOT NULL AND partner_id = ANY ((SELECT app_partner_ids())::uuid[]) END`;

/**
 * Outbound webhooks (issue 29, item 3).
 *
 * - `webhook_subscriptions`: a URL, the event types it receives, enabled, and its signing secret
 *   (sealed by SecretBoxService; during a rotation's overlap also the previous one). Owned by one
 *   organization or by the partner (all its organizations), under the partner-wide rule of
 *   migration 1763700730000 (restrictive policies and the `partner_wide_write` trigger).
 * - `webhook_messages`: the outbox, one row per (subscription, event); its id is the
 *   `webhook-id` every attempt sends. Written by the trigger below in the transaction of the change,
 *   then by the delivery worker (system context) and manual redelivery.
 * - `webhook_deliveries`: the delivery log, one row per attempt.
 *
 * The trigger `webhooks_enqueue` on audit_logs (AFTER INSERT, only for the mapped actions) inserts one
 * message per enabled subscription of the row's organization or of its partner that asked for the
 * event type. A change and its audit row commit or roll back together, and so does the message: a
 * rolled-back change emits nothing, a committed one is never lost, and no code path can forget to
 * emit. It costs two index probes when nobody subscribed (the organization's partner, then the
 * enabled subscriptions), and takes no lock a concurrent ingest waits on: the outbox has no foreign
 * key to its subscription, since a foreign-key check takes a KEY SHARE lock on the referenced row,
 * and a thousand events a second on one subscription would churn MultiXacts on it. A subscription's
 * messages and log rows are deleted with it by its repository; the retention job removes messages
 * orphaned by a deletion that raced an event.
 *
 * The trigger runs with `app.scope = system` for its own duration (as the person rule does) so that
 * an organization's caller, or an agent, enqueues for its partner's subscriptions it cannot read.
 */
export class Webhooks1763702800000 implements MigrationInterface {
  name = 'Webhooks1763702800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_subscriptions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        url text NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
        event_types text[] NOT NULL CHECK (cardinality(event_types) >= 1 AND event_types <@ ARRAY[${TYPES.map(literal).join(', ')}]::text[]),
        enabled boolean NOT NULL DEFAULT true,
        description varchar(500),
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        secret_rotated_at timestamptz,
        failing_since timestamptz,
        disabled_at timestamptz,
        disabled_reason varchar(64),
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((org_id IS NULL) <> (partner_id IS NULL)),
        CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
      );
      CREATE INDEX webhook_subscriptions_org_idx ON webhook_subscriptions (org_id, created_at) WHERE org_id IS NOT NULL;
      CREATE INDEX webhook_subscriptions_partner_idx ON webhook_subscriptions (partner_id, created_at) WHERE org_id IS NULL;
      -- The trigger's probes: only enabled subscriptions are ever looked up on the hot path.
      CREATE INDEX webhook_subscriptions_enabled_org_idx ON webhook_subscriptions (org_id) WHERE enabled AND org_id IS NOT NULL;
      CREATE INDEX webhook_subscriptions_enabled_partner_idx ON webhook_subscriptions (partner_id) WHERE enabled AND org_id IS NULL;

      CREATE TABLE webhook_messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        subscription_id uuid NOT NULL,
        partner_id uuid,
        org_id uuid,
        event_type text NOT NULL,
        payload jsonb NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        retry_until timestamptz NOT NULL DEFAULT now() + interval '24 hours',
        manual boolean NOT NULL DEFAULT false,
        last_attempt_at timestamptz,
        delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((org_id IS NULL) <> (partner_id IS NULL))
      );
      CREATE INDEX webhook_messages_due_idx ON webhook_messages (subscription_id, next_attempt_at) WHERE status = 'pending';
      -- Retention by age: a BRIN index costs next to nothing on insert (rows arrive in time order).
      CREATE INDEX webhook_messages_created_brin ON webhook_messages USING brin (created_at);

      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        subscription_id uuid NOT NULL,
        message_id uuid NOT NULL,
        partner_id uuid,
        org_id uuid,
        event_type text NOT NULL,
        attempt integer NOT NULL,
        manual boolean NOT NULL DEFAULT false,
        attempted_at timestamptz NOT NULL,
        duration_ms integer NOT NULL CHECK (duration_ms >= 0),
        status_code integer,
        outcome varchar(16) NOT NULL CHECK (outcome IN ('delivered', 'failed')),
        failure_reason varchar(32),
        failure_message varchar(300),
        CHECK ((org_id IS NULL) <> (partner_id IS NULL))
      );
      CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, attempted_at DESC, id DESC);
      CREATE INDEX webhook_deliveries_attempted_brin ON webhook_deliveries USING brin (attempted_at);
    `);

    for (const table of TABLES) {
      await q.query(`
        ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
        CREATE POLICY visible ON ${table} FOR SELECT USING (${VISIBLE});
        CREATE POLICY write_owner ON ${table} FOR INSERT WITH CHECK (app_has_owner_access(org_id, partner_id));
        CREATE POLICY update_owner ON ${table} FOR UPDATE USING (${VISIBLE}) WITH CHECK (app_has_owner_access(org_id, partner_id));
        CREATE POLICY delete_owner ON ${table} FOR DELETE USING (${VISIBLE});
        CREATE POLICY partner_wide_insert ON ${table} AS RESTRICTIVE FOR INSERT WITH CHECK (app_has_owner_write(org_id, partner_id));
        CREATE POLICY partner_wide_update ON ${table} AS RESTRICTIVE FOR UPDATE USING (true) WITH CHECK (app_has_owner_write(org_id, partner_id));
        CREATE TRIGGER partner_wide_write BEFORE INSERT OR UPDATE OR DELETE ON ${table}
          FOR EACH ROW EXECUTE FUNCTION app_guard_partner_wide_write();
        GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO app_user;
      `);
    }

    await q.query(`
      CREATE FUNCTION app_webhooks_enqueue() RETURNS trigger
        LANGUAGE plpgsql SET app.scope = 'system' AS $f$
      DECLARE
        v_type text := ${TYPE_OF_ACTION};
        v_partner uuid := NEW.partner_id;
        v_elevation jsonb;
      BEGIN
        IF NEW.org_id IS NOT NULL THEN
          SELECT o.partner_id INTO v_partner FROM organizations o WHERE o.id = NEW.org_id;
        END IF;
        IF NOT EXISTS (
          SELECT 1 FROM webhook_subscriptions s
           WHERE s.enabled AND v_type = ANY (s.event_types)
             AND (s.org_id = NEW.org_id OR (s.org_id IS NULL AND s.partner_id = v_partner))
        ) THEN
          RETURN NULL;
        END IF;
        IF NEW.resource_type = 'elevation_request' AND NEW.resource_id ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' THEN
          SELECT jsonb_build_object(
                   'id', e.id, 'status', e.status, 'flowType', e.flow_type, 'siteId', e.site_id, 'deviceId', e.device_id,
                   'deviceHostname', d.hostname, 'subjectUsername', e.subject_username,
                   'targetExecutablePath', e.target_executable_path, 'targetExecutableSigner', e.target_executable_signer,
                   'toolName', e.tool_name, 'decisionSource', e.decision_source, 'requestedAt', e.requested_at,
                   'expiresAt', e.expires_at)
            INTO v_elevation
            FROM elevation_requests e LEFT JOIN devices d ON d.org_id = e.org_id AND d.id = e.device_id
           WHERE e.id = NEW.resource_id::uuid;
        END IF;
        INSERT INTO webhook_messages (subscription_id, partner_id, org_id, event_type, payload)
        SELECT s.id, s.partner_id, s.org_id, v_type,
               jsonb_build_object(
                 'type', v_type,
                 'timestamp', to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                 'data', jsonb_build_object(
                   'auditLogId', NEW.id,
                   'auditAction', NEW.action,
                   'organizationId', NEW.org_id,
                   'partnerId', v_partner,
                   'actor', jsonb_build_object('type', NEW.actor_type, 'id', NEW.actor_id, 'userId', NEW.actor_user_id),
                   'resource', jsonb_build_object('type', NEW.resource_type, 'id', NEW.resource_id),
                   'details', NEW.details)
                 || CASE WHEN v_elevation IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('elevation', v_elevation) END)
          FROM webhook_subscriptions s
         WHERE s.enabled AND v_type = ANY (s.event_types)
           AND (s.org_id = NEW.org_id OR (s.org_id IS NULL AND s.partner_id = v_partner));
        RETURN NULL;
      END $f$;

      CREATE TRIGGER webhooks_enqueue AFTER INSERT ON audit_logs
        FOR EACH ROW WHEN (NEW.action IN (${ACTIONS}))
        EXECUTE FUNCTION app_webhooks_enqueue();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER webhooks_enqueue ON audit_logs;
      DROP FUNCTION app_webhooks_enqueue();
      DROP TABLE webhook_deliveries, webhook_messages, webhook_subscriptions;
    `);
  }
}
