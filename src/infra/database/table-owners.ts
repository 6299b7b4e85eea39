/**
 * One owner per table: the module folder whose code alone writes the table (INSERT, UPDATE,
 * DELETE, MERGE, COPY, or a TypeORM entity declared there). Every other module that needs a
 * change to the table calls the owner's exported service, which runs in the caller's
 * transaction (the importer calls ContactService.upsertMany, never SQL of its own). Reading
 * another module's table is allowed.
 *
 * Checked by src/infra/database/table-owners.spec.ts against the migrations (every table has
 * exactly one owner), the SQL snapshot of src/queries/ and the @Entity declarations.
 * Writes inside PL/pgSQL functions and triggers are the migrations' business and are not counted.
 * docs/data-ownership.md explains the rule.
 */
export const TABLE_OWNERS: Readonly<Record<string, string>> = {
  // Tenancy: the hierarchy, its members and their devices.
  partners: 'src/modules/tenancy',
  organizations: 'src/modules/tenancy/organizations',
  sites: 'src/modules/tenancy/sites',
  devices: 'src/modules/tenancy/devices',
  agents: 'src/modules/tenancy/devices',
  device_groups: 'src/modules/tenancy/device-groups',
  device_group_members: 'src/modules/tenancy/device-groups',
  roles: 'src/modules/tenancy/roles',
  users: 'src/modules/tenancy/users',
  organization_memberships: 'src/modules/tenancy/users',
  organization_membership_sites: 'src/modules/tenancy/users',
  partner_memberships: 'src/modules/tenancy/users',
  partner_membership_orgs: 'src/modules/tenancy/users',
  partner_membership_sites: 'src/modules/tenancy/users',
  membership_invitations: 'src/modules/tenancy/users',

  // Authentication: sessions, their tokens, challenges and API keys.
  sessions: 'src/modules/auth',
  refresh_tokens: 'src/modules/auth',
  mfa_challenges: 'src/modules/auth',
  password_reset_tokens: 'src/modules/auth',
  api_keys: 'src/modules/auth',

  audit_logs: 'src/modules/audit',
  partner_login_branding: 'src/modules/branding',

  // Single sign-on.
  sso_providers: 'src/modules/sso/providers',
  sso_verified_domains: 'src/modules/sso/domains',
  sso_sessions: 'src/modules/sso/login',
  // The sign-in hand-off codes: issued and redeemed by sign-in, dropped with the sessions they
  // carry by sign-out and by a provider's revocation, all sub-modules of the SSO module.
  sso_exchange_codes: 'src/modules/sso',
  sso_session_links: 'src/modules/sso/login',
  sso_logout_tokens_seen: 'src/modules/sso/login',
  user_sso_identities: 'src/modules/sso/login',
  saml_request_cache: 'src/modules/sso/saml',
  saml_consumed_assertions: 'src/modules/sso/saml',
  saml_sp_keys: 'src/modules/sso/saml',
  saml_sp_settings: 'src/modules/sso/saml',

  // SCIM provisioning.
  scim_connections: 'src/modules/scim',
  scim_users: 'src/modules/scim',
  scim_groups: 'src/modules/scim',
  scim_group_members: 'src/modules/scim',
  group_role_mappings: 'src/modules/scim',

  // Privileged access. A request's lifecycle (the request, its events, mobile approvals, pushes
  // and device commands) changes together, often in one statement (the expiry sweep, a revoke
  // that withdraws the queued actuation), so the PAM module as a whole owns those tables; agents
  // fetch commands through app_agent_commands_take and report results through DeviceCommandService.
  elevation_requests: 'src/modules/pam',
  elevation_request_counts: 'src/modules/pam',
  pam_elevation_events: 'src/modules/pam',
  pam_approval_requests: 'src/modules/pam',
  mobile_devices: 'src/modules/pam',
  push_outbox: 'src/modules/pam',
  device_commands: 'src/modules/pam',
  pam_org_config: 'src/modules/pam/config',
  pam_rules: 'src/modules/pam/rules',
  pam_rules_versions: 'src/modules/pam/rules',
  pam_signer_groups: 'src/modules/pam/signer-groups',

  // Agents.
  agent_rate_buckets: 'src/modules/agent/rate-limit',

  // Content and policies.
  contacts: 'src/modules/content/contacts',
  custom_field_definitions: 'src/modules/content/custom-fields',
  custom_field_values: 'src/modules/content/custom-fields',
  scripts: 'src/modules/content/scripts',
  policies: 'src/modules/policies',
  policy_assignments: 'src/modules/policies',

  // Imports.
  imports: 'src/modules/imports',
  import_links: 'src/modules/imports',
  import_matches: 'src/modules/imports',
  import_phase_items: 'src/modules/imports',

  // Outbound webhooks: subscriptions, the outbox (filled by the audit trigger of migration
  // 1763702800000) and the delivery log.
  webhook_subscriptions: 'src/modules/webhooks',
  webhook_messages: 'src/modules/webhooks',
  webhook_deliveries: 'src/modules/webhooks',
};
