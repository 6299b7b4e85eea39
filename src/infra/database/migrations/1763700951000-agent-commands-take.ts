import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The agent's command poll as a PL/pgSQL function, like the other hot paths (migration
 * 1763700800000): a fleet polls far more often than it does anything else, and the poll's one
 * statement (withdraw stale actuations, hand out queued commands) is a data-modifying CTE whose
 * planning costs more than its execution when nothing is queued. PL/pgSQL keeps the plan for the
 * life of the server connection, whichever client calls it, so it survives a transaction pooler.
 * SECURITY INVOKER: same role, same row-level security and settings as the statement it replaces.
 * The two updates touch disjoint rows (a withdrawn command is excluded from the hand-out), as
 * PostgreSQL requires of one statement.
 */
export class AgentCommandsTake1763700951000 implements MigrationInterface {
  name = 'AgentCommandsTake1763700951000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ${AGENT_COMMANDS_TAKE_V1}
      GRANT EXECUTE ON FUNCTION app_agent_commands_take(uuid, uuid, integer) TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION app_agent_commands_take(uuid, uuid, integer);`);
  }
}

/** The first take (a delivered command is never handed out again); 1763702200000 replaces it and restores it on the way down. */
export const AGENT_COMMANDS_TAKE_V1 = `
      CREATE FUNCTION app_agent_commands_take(p_org uuid, p_device uuid, p_limit integer)
        RETURNS TABLE (id uuid, type varchar, payload jsonb, status varchar, elevation_request_id uuid, created_at timestamptz)
        LANGUAGE plpgsql AS $f$
      #variable_conflict use_column
      BEGIN
        RETURN QUERY
        WITH withdrawn AS (
               UPDATE device_commands c
                  SET status = 'failed', error = 'Elevation no longer actuating when the agent fetched the command', completed_at = now()
                 FROM elevation_requests e
                WHERE c.org_id = p_org AND c.device_id = p_device AND c.status = 'queued' AND c.type = 'actuate_elevation'
                  AND e.org_id = c.org_id AND e.id = c.elevation_request_id AND NOT (e.status = 'actuating' AND e.expires_at > now())
               RETURNING c.id
             ), taken AS (
               UPDATE device_commands c SET status = 'delivered', delivered_at = now()
                WHERE c.id IN (SELECT d.id FROM device_commands d
                                WHERE d.org_id = p_org AND d.device_id = p_device AND d.status = 'queued'
                                  AND d.id NOT IN (SELECT w.id FROM withdrawn w)
                                ORDER BY d.created_at, d.id LIMIT p_limit FOR UPDATE SKIP LOCKED)
               RETURNING c.id, c.type, c.payload, c.status, c.elevation_request_id, c.created_at
             )
        SELECT t.id, t.type, t.payload, t.status, t.elevation_request_id, t.created_at FROM taken t;
      END
      $f$;
`;
