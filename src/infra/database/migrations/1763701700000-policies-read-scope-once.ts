import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Row-level-security policies read the request's scope once per statement, not once per row
 * (issue 19).
 *
 * The read side of most policies called app_has_org_access(org_id) and its siblings. PostgreSQL
 * inlines those SQL functions, and what remains per row is current_setting('app.org_ids') cast
 * to uuid[]: the caller's whole list of organizations parsed again for every row the policy
 * looks at. For a partner technician with 50 organizations, `GET /organizations` over a table of
 * 1,052 organizations took 44 ms in PostgreSQL; with the settings read once (an InitPlan, as
 * elevation_requests already had) it takes 1.1 ms. The cost grew with both the technician's
 * organizations and the rows examined, so a large MSP paid it on every list.
 *
 * Each policy below keeps its meaning exactly: the functions' bodies are written out with every
 * read of a setting as a scalar subquery, which the planner evaluates once per statement. The
 * NULL checks of the functions are kept, so an expression is false where it was false (not
 * NULL). The write checks (WITH CHECK) are untouched; a FOR ALL policy without its own WITH CHECK
 * checks new rows with the same expression, as before.
 *
 * POLICIES holds each policy's read expression as the catalog printed it before this migration:
 * up() writes it in the per-statement form, down() writes it back.
 */
export const POLICIES: readonly (readonly [table: string, policy: string, using: string])[] = [
  ['agent_rate_buckets', 'tenant', `app_has_org_access(org_id)`],
  ['agents', 'tenant', `app_has_org_access(org_id)`],
  ['api_keys', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['audit_logs', 'partner_wide_audit_visible', `((org_id IS NOT NULL) OR (partner_id IS NULL) OR app_has_partner_write(partner_id) OR (actor_user_id = app_current_user_id()))`],
  ['audit_logs', 'read_tenant', `
CASE
    WHEN ((org_id IS NULL) AND (partner_id IS NULL)) THEN app_is_system()
    ELSE app_has_owner_access(org_id, partner_id)
END`],
  ['contacts', 'site_scope', `((site_id IS NULL) OR app_has_site_access(site_id))`],
  ['contacts', 'tenant', `app_has_org_access(org_id)`],
  ['custom_field_definitions', 'visible', `
CASE
    WHEN (org_id IS NOT NULL) THEN app_has_org_access(org_id)
    ELSE app_partner_content_visible(partner_id)
END`],
  ['custom_field_values', 'tenant', `app_has_org_access(org_id)`],
  ['device_commands', 'tenant', `app_has_org_access(org_id)`],
  ['device_group_members', 'tenant', `app_has_org_access(org_id)`],
  ['device_groups', 'site_scope', `app_has_site_access(site_id)`],
  ['device_groups', 'tenant', `app_has_org_access(org_id)`],
  ['devices', 'site_scope', `app_has_site_access(site_id)`],
  ['devices', 'tenant', `app_has_org_access(org_id)`],
  ['group_role_mappings', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['import_links', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['import_matches', 'tenant', `app_has_org_access(org_id)`],
  ['imports', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['membership_invitations', 'tenant', `(app_has_owner_access(org_id, partner_id) OR (user_id = app_current_user_id()))`],
  ['mfa_challenges', 'system_only', `app_is_system()`],
  ['mobile_devices', 'own', `(app_is_system() OR (user_id = app_current_user_id()))`],
  ['organization_membership_sites', 'tenant', `app_has_org_access(org_id)`],
  ['organization_memberships', 'tenant', `(app_has_org_access(org_id) OR (user_id = app_current_user_id()))`],
  ['organizations', 'visible', `app_has_org_access(id)`],
  ['pam_approval_requests', 'tenant', `app_has_org_access(org_id)`],
  ['pam_elevation_events', 'tenant', `app_has_org_access(org_id)`],
  ['pam_org_config', 'tenant', `app_has_org_access(org_id)`],
  ['pam_rules', 'tenant', `app_has_org_access(org_id)`],
  ['pam_rules_versions', 'tenant', `app_has_org_access(org_id)`],
  ['pam_signer_groups', 'tenant', `app_has_org_access(org_id)`],
  ['partner_login_branding', 'tenant', `app_has_partner_access(partner_id)`],
  ['partner_membership_orgs', 'tenant', `app_has_partner_access(partner_id)`],
  ['partner_membership_sites', 'tenant', `app_has_partner_access(partner_id)`],
  ['partner_memberships', 'tenant', `(app_has_partner_access(partner_id) OR (user_id = app_current_user_id()))`],
  ['partners', 'tenant', `app_has_partner_access(id)`],
  ['password_reset_tokens', 'system_only', `app_is_system()`],
  ['policies', 'visible', `
CASE
    WHEN (org_id IS NOT NULL) THEN app_has_org_access(org_id)
    ELSE app_partner_content_visible(partner_id)
END`],
  ['policy_assignments', 'visible', `
CASE
    WHEN (org_id IS NOT NULL) THEN app_has_org_access(org_id)
    ELSE app_partner_content_visible(partner_id)
END`],
  ['push_outbox', 'tenant', `app_has_org_access(org_id)`],
  ['refresh_tokens', 'own', `(app_is_system() OR (user_id = app_current_user_id()))`],
  ['roles', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['saml_consumed_assertions', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['saml_request_cache', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['saml_sp_keys', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['saml_sp_settings', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['scim_connections', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['scim_group_members', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['scim_groups', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['scim_users', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['scripts', 'visible', `
CASE
    WHEN (org_id IS NOT NULL) THEN app_has_org_access(org_id)
    ELSE app_partner_content_visible(partner_id)
END`],
  ['sessions', 'own', `(app_is_system() OR (user_id = app_current_user_id()))`],
  ['sites', 'tenant', `app_has_org_access(org_id)`],
  ['sso_exchange_codes', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['sso_logout_tokens_seen', 'system_only', `app_is_system()`],
  ['sso_providers', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['sso_session_links', 'system_only', `app_is_system()`],
  ['sso_sessions', 'system_only', `app_is_system()`],
  ['sso_verified_domains', 'tenant', `app_has_org_access(org_id)`],
  ['user_sso_identities', 'own_read', `(user_id = app_current_user_id())`],
  ['user_sso_identities', 'tenant', `app_has_owner_access(org_id, partner_id)`],
  ['users', 'visible', `(app_is_system() OR (id = app_current_user_id()) OR (EXISTS ( SELECT 1
   FROM organization_memberships m
  WHERE ((m.user_id = users.id) AND app_has_org_access(m.org_id)))) OR (EXISTS ( SELECT 1
   FROM partner_memberships pm
  WHERE ((pm.user_id = users.id) AND app_has_partner_access(pm.partner_id)))))`],
];

const ARG = '([a-z_]+(?:\\.[a-z_]+)?)';
const system = '(SELECT app_is_system())';
const inOrgs = (x: string) => `(${system} OR (${x} IS NOT NULL AND ${x} = ANY ((SELECT app_org_ids())::uuid[])))`;
const inPartners = (x: string) => `(${system} OR (${x} IS NOT NULL AND ${x} = ANY ((SELECT app_partner_ids())::uuid[])))`;

/** A policy expression with each scope function written out and each setting read once per statement. */
export function perStatement(using: string): string {
  return using
    .replace(new RegExp(`app_has_owner_access\\(${ARG}, ${ARG}\\)`, 'g'), (_, org: string, partner: string) => `(CASE WHEN ${org} IS NOT NULL THEN ${inOrgs(org)} ELSE ${inPartners(partner)} END)`)
    .replace(new RegExp(`app_has_org_access\\(${ARG}\\)`, 'g'), (_, x: string) => inOrgs(x))
    .replace(new RegExp(`app_has_partner_access\\(${ARG}\\)`, 'g'), (_, x: string) => inPartners(x))
    .replace(new RegExp(`app_has_site_access\\(${ARG}\\)`, 'g'), (_, x: string) => `((SELECT app_site_ids()) IS NULL OR ${x} = ANY ((SELECT app_site_ids())::uuid[]))`)
    .replace(/(?<!SELECT )app_is_system\(\)/g, system)
    .replace(/(?<!SELECT )app_current_user_id\(\)/g, '(SELECT app_current_user_id())');
}

export class PoliciesReadScopeOnce1763701700000 implements MigrationInterface {
  name = 'PoliciesReadScopeOnce1763701700000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, policy, using] of POLICIES) await q.query(`ALTER POLICY ${policy} ON ${table} USING (${perStatement(using)})`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table, policy, using] of POLICIES) await q.query(`ALTER POLICY ${policy} ON ${table} USING (${using})`);
  }
}
