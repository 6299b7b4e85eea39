import { MigrationInterface, QueryRunner } from 'typeorm';
import { fanOut } from './1763700970000-approval-fan-out-suspended';

/**
 * The approval fan-out reads the request it fans out by its primary key alone (issue 19).
 *
 * It read it with `org_id = p_org AND id = p_request AND status = 'pending'`, and the generic plan
 * PL/pgSQL keeps after five calls chose the partial index of pending requests
 * (elevation_requests_pending_deadline_idx) whenever the statistics showed few of them: a walk of
 * every pending request, at every ingest of a pending one. Measured on the ingest benchmark's
 * data: 0.25 ms a call with 3,000 pending requests, growing with them, against 0.02 ms by key.
 * With no statistics at all (a table analyzed while empty) the same conditions could also tie
 * with the list index (org_id, requested_at, id), which walks the organization's requests.
 *
 * The row is now found by `id` in a subquery that no condition can be pushed into (OFFSET 0),
 * where only the primary key can serve; its organization and status are checked on that one row,
 * so the result is the same.
 */
export class FanOutRequestLookup1763701600000 implements MigrationInterface {
  name = 'FanOutRequestLookup1763701600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(fanOut(true, true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(fanOut(true));
  }
}
