import { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables with partner-owned rows (org_id NULL, partner_id set): each applies to every organization of its partner. */
const PARTNER_OWNED = [
  'roles',
  'api_keys',
  'sso_providers',
  'custom_field_definitions',
  'scripts',
  'policies',
  'policy_assignments',
  'imports',
  'import_links',
] as const;

/**
 * Partner-wide writes need all-organization access (security review, finding 2).
 *
 * A partner-owned row (SSO provider, login branding, partner role, partner-wide key, policy or
 * assignment at partner level, partner script or custom field, partner import) acts on every
 * organization of the partner, including organizations a selected-organizations technician cannot
 * reach; only a caller whose reach is the whole partner may create, change or delete one. The
 * request sets `app.partner_wide` for such a caller; system context passes.
 *
 * Two layers, both in the database:
 *  - a restrictive row-level-security policy on INSERT and UPDATE (WITH CHECK), so a forgotten
 *    service check fails closed;
 *  - a BEFORE trigger on INSERT, UPDATE and DELETE that raises insufficient_privilege with the
 *    message starting `partner_wide_write_denied`, which the error filter turns into 403 `forbidden`. A DELETE
 *    policy would silently skip the row (the caller would see 404 for a row it can read); the
 *    trigger gives the clear answer instead, and fires before the INSERT/UPDATE policy checks.
 *
 * Partner-wide API keys are credentials of the whole partner: only partner-wide callers see them.
 * Audit rows also name the person behind an API key (`actor_user_id`).
 */
export class PartnerWideWrites1763700730000 implements MigrationInterface {
  name = 'PartnerWideWrites1763700730000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION app_partner_wide() RETURNS boolean LANGUAGE sql STABLE AS
        $f$ SELECT coalesce(current_setting('app.partner_wide', true) = 'on', false) $f$;
      CREATE FUNCTION app_has_partner_write(p_partner uuid) RETURNS boolean LANGUAGE sql STABLE AS
        $f$ SELECT app_is_system() OR (app_partner_wide() AND p_partner IS NOT NULL AND p_partner = ANY (app_partner_ids())) $f$;
      CREATE FUNCTION app_has_owner_write(p_org uuid, p_partner uuid) RETURNS boolean LANGUAGE sql STABLE AS
        $f$ SELECT CASE WHEN p_org IS NOT NULL THEN app_has_org_access(p_org) ELSE app_has_partner_write(p_partner) END $f$;

      CREATE FUNCTION app_guard_partner_wide_write() RETURNS trigger LANGUAGE plpgsql AS $f$
      DECLARE
        r jsonb;
      BEGIN
        -- Like row-level security, the rule binds the request role, not a superuser's maintenance.
        IF current_setting('is_superuser') = 'on' THEN
          RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
        END IF;
        FOREACH r IN ARRAY CASE TG_OP
          WHEN 'INSERT' THEN ARRAY[to_jsonb(NEW)]
          WHEN 'DELETE' THEN ARRAY[to_jsonb(OLD)]
          ELSE ARRAY[to_jsonb(OLD), to_jsonb(NEW)] END
        LOOP
          IF (r->>'org_id') IS NULL AND NOT app_has_partner_write((r->>'partner_id')::uuid) THEN
            IF (r->>'partner_id')::uuid = ANY (app_partner_ids()) THEN
              RAISE EXCEPTION 'partner_wide_write_denied: row-level security refuses this write to %: a row owned by a partner needs access to all of its organizations', TG_TABLE_NAME
                USING ERRCODE = 'insufficient_privilege';
            END IF;
            -- Another tenant's row: the same refusal as the policies give, answered as not found.
            RAISE EXCEPTION 'new row violates row-level security policy for table "%"', TG_TABLE_NAME
              USING ERRCODE = 'insufficient_privilege';
          END IF;
        END LOOP;
        RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
      END $f$;
    `);

    for (const table of PARTNER_OWNED) {
      await q.query(`
        CREATE POLICY partner_wide_insert ON ${table} AS RESTRICTIVE FOR INSERT WITH CHECK (app_has_owner_write(org_id, partner_id));
        CREATE POLICY partner_wide_update ON ${table} AS RESTRICTIVE FOR UPDATE USING (true) WITH CHECK (app_has_owner_write(org_id, partner_id));
        CREATE TRIGGER partner_wide_write BEFORE INSERT OR UPDATE OR DELETE ON ${table}
          FOR EACH ROW EXECUTE FUNCTION app_guard_partner_wide_write();
      `);
    }

    await q.query(`
      CREATE POLICY partner_wide_insert ON partner_login_branding AS RESTRICTIVE FOR INSERT WITH CHECK (app_has_partner_write(partner_id));
      CREATE POLICY partner_wide_update ON partner_login_branding AS RESTRICTIVE FOR UPDATE USING (true) WITH CHECK (app_has_partner_write(partner_id));
      CREATE TRIGGER partner_wide_write BEFORE INSERT OR UPDATE OR DELETE ON partner_login_branding
        FOR EACH ROW EXECUTE FUNCTION app_guard_partner_wide_write();

      CREATE POLICY partner_wide_keys_visible ON api_keys AS RESTRICTIVE FOR SELECT
        USING (org_id IS NOT NULL OR app_has_partner_write(partner_id));

      ALTER TABLE audit_logs ADD COLUMN actor_user_id uuid;
      CREATE INDEX audit_logs_actor_user_idx ON audit_logs (actor_user_id, created_at DESC) WHERE actor_user_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [...PARTNER_OWNED, 'partner_login_branding']) {
      await q.query(`
        DROP TRIGGER partner_wide_write ON ${table};
        DROP POLICY partner_wide_insert ON ${table};
        DROP POLICY partner_wide_update ON ${table};
      `);
    }
    await q.query(`
      DROP POLICY partner_wide_keys_visible ON api_keys;
      DROP INDEX audit_logs_actor_user_idx;
      ALTER TABLE audit_logs DROP COLUMN actor_user_id;
      DROP FUNCTION app_guard_partner_wide_write();
      DROP FUNCTION app_has_owner_write(uuid, uuid);
      DROP FUNCTION app_has_partner_write(uuid);
      DROP FUNCTION app_partner_wide();
    `);
  }
}
