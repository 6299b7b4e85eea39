import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Many agents' reads of their command queues in one statement (docs/pam-lifecycle.md, "A fleet
 * coming back"): after a deploy a fleet reconnects within seconds, and each held wait starts with a
 * read of its device's queue. One statement per read was one round trip and one message each way per
 * agent; the instance gathers the reads that arrive together and sends them as one call. Each read is
 * app_agent_commands_take exactly as one agent's poll runs it (same withdrawal, hand-out, redelivery
 * marker and revoked-token check), in the order given; `n` says which read a row answers (1-based),
 * so that two reads for one device (an agent polling twice at once) each get their own answer. It
 * runs in system context (the caller names every device from its agent's token).
 */
export class AgentCommandsTakeMany1763702900000 implements MigrationInterface {
  name = 'AgentCommandsTakeMany1763702900000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION app_agent_commands_take_many(p_orgs uuid[], p_devices uuid[], p_agents uuid[], p_limit integer, p_redeliver_after interval)
        RETURNS TABLE (n integer, id uuid, type varchar, payload jsonb, status varchar, elevation_request_id uuid, created_at timestamptz, delivery_count integer, redeliver_in_ms integer)
        LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      BEGIN
        IF cardinality(p_orgs) <> cardinality(p_devices) OR cardinality(p_devices) <> cardinality(p_agents) THEN
          RAISE EXCEPTION 'app_agent_commands_take_many: % organizations, % devices and % agents', cardinality(p_orgs), cardinality(p_devices), cardinality(p_agents);
        END IF;
        FOR i IN 1 .. cardinality(p_devices) LOOP
          RETURN QUERY SELECT i, t.id, t.type, t.payload, t.status, t.elevation_request_id, t.created_at, t.delivery_count, t.redeliver_in_ms
                         FROM app_agent_commands_take(p_orgs[i], p_devices[i], p_agents[i], p_limit, p_redeliver_after) t;
        END LOOP;
      END
      $f$;
      GRANT EXECUTE ON FUNCTION app_agent_commands_take_many(uuid[], uuid[], uuid[], integer, interval) TO app_user;
    `);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION app_agent_commands_take_many(uuid[], uuid[], uuid[], integer, interval);`);
  }
}
