import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Import bookkeeping that does not grow with the document (issue 30, performance):
 * - `import_phase_items`: the report items of each committed phase of a real import, one row
 *   written once when the phase commits. They used to accumulate under `imports.report.pending`,
 *   so every phase commit (and every progress poll) read and rewrote megabytes of JSON that grew
 *   with each phase: 3–5 s per phase boundary on a 60,000-record document. The report of a
 *   finished import is its row's report followed by these items, in phase order. `json`, not
 *   `jsonb`: the items are written once and read back whole, never queried inside, so the
 *   database keeps the text as it came instead of converting it both ways.
 * - `imports.plan_gz`: the plan as gzip-compressed JSON, replacing the jsonb `plan` for new jobs
 *   (kept only until the job ends, like `plan`). Parsing a 10 MB plan into jsonb and compressing
 *   it again took the database about a second inside the request that answers 202. `plan` stays
 *   for jobs queued by an earlier version.
 * Row-level security: a row is visible, and may be written, exactly when its import is visible
 * to the caller (the policy reads `imports` under the caller's own policies: the owner's tenant
 * policy, and a partner-level import only for callers who reach every organization). The rows
 * carry no owner columns of their own, so nothing can disagree with the import's.
 */
export class ImportPhaseItems1763702300000 implements MigrationInterface {
  name = 'ImportPhaseItems1763702300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE imports ADD COLUMN plan_gz bytea;
      CREATE TABLE import_phase_items (
        import_id uuid NOT NULL REFERENCES imports(id) ON DELETE CASCADE,
        ordinal integer NOT NULL CHECK (ordinal >= 0),
        phase varchar(32) NOT NULL,
        items json NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (import_id, ordinal)
      );
      ALTER TABLE import_phase_items ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY of_visible_import ON import_phase_items
        USING (EXISTS (SELECT 1 FROM imports i WHERE i.id = import_id))
        WITH CHECK (EXISTS (SELECT 1 FROM imports i WHERE i.id = import_id));
      GRANT SELECT, INSERT ON import_phase_items TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE import_phase_items;
      ALTER TABLE imports DROP COLUMN plan_gz;
    `);
  }
}
