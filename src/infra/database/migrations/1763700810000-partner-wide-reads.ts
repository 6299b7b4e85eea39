import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a technician limited to selected organizations may read of the partner's own rows. A
 * partner-level import carries a report of what it matched and wrote in every organization it
 * touched, and partner-level audit rows describe actions across the partner: both would show him
 * organizations he cannot reach (found by the authorization matrix). Like partner-wide API keys,
 * partner-level imports are visible only to callers who reach every organization; partner-level
 * audit rows to those callers and to the person who acted.
 */
export class PartnerWideReads1763700810000 implements MigrationInterface {
  name = 'PartnerWideReads1763700810000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE POLICY partner_wide_imports_visible ON imports AS RESTRICTIVE FOR SELECT
        USING (org_id IS NOT NULL OR app_has_partner_write(partner_id));
      CREATE POLICY partner_wide_audit_visible ON audit_logs AS RESTRICTIVE FOR SELECT
        USING (org_id IS NOT NULL OR partner_id IS NULL OR app_has_partner_write(partner_id) OR actor_user_id = app_current_user_id());
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP POLICY partner_wide_audit_visible ON audit_logs;
      DROP POLICY partner_wide_imports_visible ON imports;
    `);
  }
}
