import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Separation of duties for every request a person files (a just-in-time elevation, an AI tool
 * action): the one who filed it never approves it, whichever credential either step used. Agent
 * prompts name no person (subject_user_id is NULL) and are unaffected. Rows approved before this
 * rule are left as history (NOT VALID); every new write is checked.
 */
export class NoSelfApproval1763700740000 implements MigrationInterface {
  name = 'NoSelfApproval1763700740000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE elevation_requests DROP CONSTRAINT elevation_requests_no_self_approval;
      ALTER TABLE elevation_requests ADD CONSTRAINT elevation_requests_no_self_approval
        CHECK (approved_by IS NULL OR approved_by IS DISTINCT FROM subject_user_id) NOT VALID;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE elevation_requests DROP CONSTRAINT elevation_requests_no_self_approval;
      ALTER TABLE elevation_requests ADD CONSTRAINT elevation_requests_no_self_approval
        CHECK (flow_type <> 'tech_jit_admin' OR approved_by IS NULL OR approved_by IS DISTINCT FROM subject_user_id);
    `);
  }
}
