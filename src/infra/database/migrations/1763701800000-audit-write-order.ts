import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Audit rows carry the moment they were written (clock_timestamp()), not the start of their
 * transaction (now()).
 *
 * One request often writes several audit rows in its one transaction: a user and their
 * membership, a sign-in that provisions the person and then signs them in. With now() those rows
 * shared one created_at, so the audit log (ordered by created_at, then by a random id) listed them
 * in an arbitrary order (a test that read them back in time order failed in a clean-clone run).
 * clock_timestamp() puts them in the order they were written. Rows of one
 * multi-row statement (recordMany) can still share a microsecond; they are one batch.
 */
export class AuditWriteOrder1763701800000 implements MigrationInterface {
  name = 'AuditWriteOrder1763701800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_logs ALTER COLUMN created_at SET DEFAULT clock_timestamp()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_logs ALTER COLUMN created_at SET DEFAULT now()`);
  }
}
