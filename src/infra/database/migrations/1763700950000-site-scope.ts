import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Site restriction in row-level security. A site-restricted member or technician reaches only
 * some sites of an organization; the services check it (for clear 403s on writes), and now the
 * database does too, so a forgotten check fails closed: the transaction setting `app.site_ids`
 * holds the caller's sites (empty: every site, as for unrestricted callers, agents and system
 * context), and a restrictive policy on each site-bearing table admits only rows of those sites.
 *
 * The tables and what a restricted caller sees of their rows without a site:
 * - devices, elevation_requests: every row has a site;
 * - device_groups: an organization-wide group (no site) reaches every site, so it is outside a
 *   restricted caller's reach, as the service already decided;
 * - contacts: a contact with no site belongs to the organization and stays visible.
 * Not here: pam_rules (their reads feed per-instance caches shared by every caller, so they are
 * read unrestricted and filtered by the service; writes are checked by the service), and
 * policy_assignments (a site there is a policy's target, not the row's owner).
 */
export class SiteScope1763700950000 implements MigrationInterface {
  name = 'SiteScope1763700950000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION app_site_ids() RETURNS uuid[] LANGUAGE sql STABLE AS
        $f$ SELECT nullif(current_setting('app.site_ids', true), '')::uuid[] $f$;
      -- True for every site when the caller is not site-restricted; a row without a site is never one of a restricted caller's sites.
      CREATE FUNCTION app_has_site_access(p_site uuid) RETURNS boolean LANGUAGE sql STABLE AS
        $f$ SELECT app_site_ids() IS NULL OR p_site = ANY (app_site_ids()) $f$;
      GRANT EXECUTE ON FUNCTION app_site_ids(), app_has_site_access(uuid) TO app_user;

      CREATE POLICY site_scope ON devices AS RESTRICTIVE USING (app_has_site_access(site_id)) WITH CHECK (app_has_site_access(site_id));
      CREATE POLICY site_scope ON elevation_requests AS RESTRICTIVE USING (app_has_site_access(site_id)) WITH CHECK (app_has_site_access(site_id));
      CREATE POLICY site_scope ON device_groups AS RESTRICTIVE USING (app_has_site_access(site_id)) WITH CHECK (app_has_site_access(site_id));
      CREATE POLICY site_scope ON contacts AS RESTRICTIVE
        USING (site_id IS NULL OR app_has_site_access(site_id)) WITH CHECK (site_id IS NULL OR app_has_site_access(site_id));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP POLICY site_scope ON contacts;
      DROP POLICY site_scope ON device_groups;
      DROP POLICY site_scope ON elevation_requests;
      DROP POLICY site_scope ON devices;
      DROP FUNCTION app_has_site_access(uuid);
      DROP FUNCTION app_site_ids();
    `);
  }
}
