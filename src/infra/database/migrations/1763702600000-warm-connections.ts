import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `app_warm_connection()`: run once on each new request-role connection before the instance
 * listens (PoolWarmer), it executes the agent hot path's functions against one real device and
 * undoes everything it wrote. A server connection compiles each PL/pgSQL function, plans each of
 * its statements and loads the catalog and row-level-security entries they touch on first use:
 * 20–30 ms for each of the ingest functions on this machine, paid by the first requests of every
 * connection at once after a start, which made the first seconds a cliff (issue: no cold cliff).
 * Plans and caches outlive the rolled-back subtransaction; the rows, the spent rate-limit token and
 * the notifications do not.
 *
 * It sees a device only in system scope (the warmer runs it through the named system-context
 * path) and answers how many functions it ran: 0 when there is no device yet. Connection n works on
 * the n-th device (the first when there are fewer), so that the warm-ups of a pool, run at once,
 * do not queue behind one device's rate-limit row.
 */
export class WarmConnections1763702600000 implements MigrationInterface {
  name = 'WarmConnections1763702600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION app_warm_connection(p_nth integer) RETURNS integer LANGUAGE plpgsql AS $f$
      DECLARE
        v record;
        v_request uuid;
        v_ran integer := 0;
      BEGIN
        SELECT d.org_id, d.site_id, d.id AS device_id, a.id AS agent_id INTO v
          FROM agents a JOIN devices d ON d.org_id = a.org_id AND d.id = a.device_id
         WHERE a.revoked_at IS NULL AND d.status = 'active'
         OFFSET greatest(p_nth, 0) LIMIT 1;
        IF NOT FOUND AND p_nth > 0 THEN RETURN app_warm_connection(0); END IF;
        IF NOT FOUND THEN RETURN 0; END IF;
        -- The rules are read when an organization's rules change (the compiled-rule cache).
        PERFORM 1 FROM pam_rules WHERE false;
        BEGIN
          PERFORM * FROM app_ingest_context(v.org_id, v.device_id);
          PERFORM * FROM app_agent_rate_bucket_take(v.org_id, v.device_id, 1, 1);
          -- Without spending a token here: an empty bucket would skip the insert (and its plans).
          SELECT i.id INTO v_request
            FROM app_ingest_insert(v.org_id, v.site_id, v.device_id, 'pending', 'warm-up', 'C:\\warm-up.exe', repeat('0', 64),
                                   NULL, NULL, NULL, NULL, NULL, 'warm-up', false, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                   v.agent_id, 'elevation.requested', '{}'::jsonb, NULL, NULL, false, 1, 1) i;
          PERFORM * FROM app_pam_approval_fan_out(v.org_id, v_request, 1);
          PERFORM * FROM app_agent_commands_take(v.org_id, v.device_id, v.agent_id, 1, interval '30 seconds');
          v_ran := 5;
          -- Undo every write above (the subtransaction rolls back); the plans stay.
          RAISE SQLSTATE 'RWARM';
        EXCEPTION WHEN SQLSTATE 'RWARM' THEN
          NULL;
        END;
        RETURN v_ran;
      END
      $f$;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION app_warm_connection(integer)`);
  }
}
