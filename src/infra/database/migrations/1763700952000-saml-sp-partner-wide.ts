import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A partner SAML provider's SP keys and SP settings (migration 1763700942000) act on sign-in for
 * every organization of the partner, like the provider itself: only a caller whose reach is the
 * whole partner may create, change or delete them. Their policies already check
 * app_has_owner_write on writes; this adds the guard every partner-ownable object carries
 * (migration 1763700730000): the restrictive write policies and the trigger that names the refusal
 * (partner_wide_write_denied, answered 403).
 */
const TABLES = ['saml_sp_keys', 'saml_sp_settings'];

export class SamlSpPartnerWide1763700952000 implements MigrationInterface {
  name = 'SamlSpPartnerWide1763700952000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      await q.query(`
        CREATE POLICY partner_wide_insert ON ${table} AS RESTRICTIVE FOR INSERT WITH CHECK (app_has_owner_write(org_id, partner_id));
        CREATE POLICY partner_wide_update ON ${table} AS RESTRICTIVE FOR UPDATE USING (true) WITH CHECK (app_has_owner_write(org_id, partner_id));
        CREATE TRIGGER partner_wide_write BEFORE INSERT OR UPDATE OR DELETE ON ${table}
          FOR EACH ROW EXECUTE FUNCTION app_guard_partner_wide_write();
      `);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      await q.query(`
        DROP TRIGGER partner_wide_write ON ${table};
        DROP POLICY partner_wide_update ON ${table};
        DROP POLICY partner_wide_insert ON ${table};
      `);
    }
  }
}
