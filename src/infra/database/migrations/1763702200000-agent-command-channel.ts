import { MigrationInterface, QueryRunner } from 'typeorm';
import { AGENT_COMMANDS_TAKE_V1 } from './1763700951000-agent-commands-take';

/**
 * The agent's held command channel (docs/pam-lifecycle.md, "The command channel"):
 * - every command queued (an INSERT, or a row set back to queued) sends a notification on the
 *   channel `agent_commands` with `<org id>:<device id>` when its transaction commits; an instance
 *   holding that device's wait wakes it (the notification carries no command, only whose queue moved);
 * - delivery is at least once: a delivered command stays due until the agent acknowledges it (an
 *   explicit ack or its result), and is handed out again `p_redeliver_after` after its last
 *   delivery; `delivery_count` says how often. An actuation whose elevation is no longer being
 *   actuated (revoked, expired, window past) is withdrawn whether queued or delivered and not yet
 *   acknowledged: it never reaches a device late;
 * - the take hands nothing to an agent whose token was revoked while its wait was held; when it
 *   hands nothing out, one row with only `redeliver_in_ms` says when the device's next
 *   unacknowledged delivery becomes due again (a held wait reads the queue again then).
 * Commands delivered before this migration count as acknowledged (they were handed out once, as
 * the channel promised then).
 */
export class AgentCommandChannel1763702200000 implements MigrationInterface {
  name = 'AgentCommandChannel1763702200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE device_commands ADD COLUMN acknowledged_at timestamptz, ADD COLUMN delivery_count integer NOT NULL DEFAULT 0;
      UPDATE device_commands SET acknowledged_at = delivered_at, delivery_count = 1 WHERE delivered_at IS NOT NULL;
      CREATE INDEX device_commands_unacknowledged_idx ON device_commands (org_id, device_id, delivered_at)
        WHERE status = 'delivered' AND acknowledged_at IS NULL;

      CREATE FUNCTION app_notify_agent_commands() RETURNS trigger LANGUAGE plpgsql AS $f$
      BEGIN
        PERFORM pg_notify('agent_commands', NEW.org_id::text || ':' || NEW.device_id::text);
        RETURN NULL;
      END
      $f$;
      CREATE TRIGGER device_commands_notify AFTER INSERT OR UPDATE OF status ON device_commands
        FOR EACH ROW WHEN (NEW.status = 'queued') EXECUTE FUNCTION app_notify_agent_commands();

      DROP FUNCTION app_agent_commands_take(uuid, uuid, integer);
      CREATE FUNCTION app_agent_commands_take(p_org uuid, p_device uuid, p_agent uuid, p_limit integer, p_redeliver_after interval)
        RETURNS TABLE (id uuid, type varchar, payload jsonb, status varchar, elevation_request_id uuid, created_at timestamptz, delivery_count integer, redeliver_in_ms integer)
        LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM agents a WHERE a.org_id = p_org AND a.id = p_agent AND a.device_id = p_device AND a.revoked_at IS NULL) THEN
          RETURN;
        END IF;
        RETURN QUERY
        WITH withdrawn AS (
               UPDATE device_commands c
                  SET status = 'failed', error = 'Elevation no longer actuating when the agent fetched the command', completed_at = now()
                 FROM elevation_requests e
                WHERE c.org_id = p_org AND c.device_id = p_device AND c.type = 'actuate_elevation'
                  AND (c.status = 'queued' OR (c.status = 'delivered' AND c.acknowledged_at IS NULL))
                  AND e.org_id = c.org_id AND e.id = c.elevation_request_id AND NOT (e.status = 'actuating' AND e.expires_at > now())
               RETURNING c.id
             ), taken AS (
               UPDATE device_commands c SET status = 'delivered', delivered_at = now(), delivery_count = c.delivery_count + 1
                WHERE c.id IN (SELECT d.id FROM device_commands d
                                WHERE d.org_id = p_org AND d.device_id = p_device
                                  AND (d.status = 'queued'
                                       OR (d.status = 'delivered' AND d.acknowledged_at IS NULL AND d.delivered_at <= now() - p_redeliver_after))
                                  AND d.id NOT IN (SELECT w.id FROM withdrawn w)
                                ORDER BY d.created_at, d.id LIMIT p_limit FOR UPDATE SKIP LOCKED)
               RETURNING c.id, c.type, c.payload, c.status, c.elevation_request_id, c.created_at, c.delivery_count
             )
        SELECT t.id, t.type, t.payload, t.status, t.elevation_request_id, t.created_at, t.delivery_count, NULL::integer FROM taken t;
        IF NOT FOUND THEN
          -- Nothing due: when the next unacknowledged delivery becomes due again, for a wait to read then.
          RETURN QUERY
          SELECT NULL::uuid, NULL::varchar, NULL::jsonb, NULL::varchar, NULL::uuid, NULL::timestamptz, NULL::integer,
                 greatest(0, ceil(extract(epoch FROM min(d.delivered_at) + p_redeliver_after - now()) * 1000))::integer
            FROM device_commands d
           WHERE d.org_id = p_org AND d.device_id = p_device AND d.status = 'delivered' AND d.acknowledged_at IS NULL
          HAVING count(*) > 0;
        END IF;
      END
      $f$;
      GRANT EXECUTE ON FUNCTION app_agent_commands_take(uuid, uuid, uuid, integer, interval) TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION app_agent_commands_take(uuid, uuid, uuid, integer, interval);
      ${AGENT_COMMANDS_TAKE_V1}
      GRANT EXECUTE ON FUNCTION app_agent_commands_take(uuid, uuid, integer) TO app_user;
      DROP TRIGGER device_commands_notify ON device_commands;
      DROP FUNCTION app_notify_agent_commands();
      DROP INDEX device_commands_unacknowledged_idx;
      ALTER TABLE device_commands DROP COLUMN delivery_count, DROP COLUMN acknowledged_at;
    `);
  }
}
