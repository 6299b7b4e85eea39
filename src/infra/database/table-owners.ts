/**
 * One owner per table: the module folder whose code alone writes the table (INSERT, UPDATE,
 * DELETE, MERGE, COPY, or a TypeORM entity declared there). Every other module that needs a
 * change to the table calls the owner's exported service, which runs in the caller's
 * transaction (the importer calls ContactService.upsertMany, never SQL of its own). Reading
 * another module's table is allowed.
 *
 * Checked by src/infra/database/table-owners.spec.ts against the migrations (every table has
 * exactly one owner), the SQL snapshot of src/queries/ and the @Entity declarations.
 * Writes inside database functions and triggers count too: FUNCTION_OWNERS, below, gives each
 * function its owner and the tables it writes. docs/data-ownership.md explains the rule.
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
  // read their command queues (app_agent_commands_take, PAM's) and report results through DeviceCommandService.
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

export interface FunctionOwner {
  /** The module folder that owns the function: the owner of the tables it writes, its main table's when it writes several modules' tables. */
  owner: string;
  /** The tables of the owner that the function's own statements write, its main table first. */
  writes?: readonly string[];
  /** Tables of other modules that it writes on their owners' behalf, each with the reason (reviewed with the owner of that table). */
  onBehalfOf?: Readonly<Record<string, string>>;
}

/**
 * One owner per database function the migrations leave (app_*, the trigger functions and the rest):
 * a function that writes a table belongs to that table's owner; one that writes several modules'
 * tables belongs to the owner of its main table and lists the others in onBehalfOf. `writes` and
 * `onBehalfOf` together are exactly the tables its own statements write (the spec reads its live
 * body); what the functions it calls write is theirs. From TypeScript, a function that changes
 * anything (itself or through what it calls) is called only from its owner's folder; one that
 * changes nothing is read like a table, by any module.
 */
export const FUNCTION_OWNERS: Readonly<Record<string, FunctionOwner>> = {
  // The tenant context: the transaction's settings and the row-level-security predicates built on them.
  app_current_scope: { owner: 'src/infra/database' },
  app_is_system: { owner: 'src/infra/database' },
  app_current_user_id: { owner: 'src/infra/database' },
  app_org_ids: { owner: 'src/infra/database' },
  app_partner_ids: { owner: 'src/infra/database' },
  app_site_ids: { owner: 'src/infra/database' },
  app_has_org_access: { owner: 'src/infra/database' },
  app_has_partner_access: { owner: 'src/infra/database' },
  app_has_owner_access: { owner: 'src/infra/database' },
  app_has_site_access: { owner: 'src/infra/database' },
  app_partner_wide: { owner: 'src/infra/database' },
  app_has_partner_write: { owner: 'src/infra/database' },
  app_has_owner_write: { owner: 'src/infra/database' },
  app_guard_partner_wide_write: { owner: 'src/infra/database' },
  // Runs each hot statement once on a new pooled connection and rolls it back (pool-warmer.ts).
  app_warm_connection: { owner: 'src/infra/database' },

  // Tenancy: who may act on a person (person-authority.repository.ts) and the guard trigger that enforces it.
  app_actor_id: { owner: 'src/modules/tenancy/users' },
  app_perm_covers: { owner: 'src/modules/tenancy/users' },
  app_reach_covers: { owner: 'src/modules/tenancy/users' },
  app_person_reach: { owner: 'src/modules/tenancy/users' },
  app_person_holding: { owner: 'src/modules/tenancy/users' },
  app_actor_authority: { owner: 'src/modules/tenancy/users' },
  app_may_act_on: { owner: 'src/modules/tenancy/users' },
  app_may_grant: { owner: 'src/modules/tenancy/users' },
  app_may_act_on_identity: { owner: 'src/modules/tenancy/users' },
  app_account_owner: { owner: 'src/modules/tenancy/users' },
  app_may_change_email: { owner: 'src/modules/tenancy/users' },
  app_guard_person_change: { owner: 'src/modules/tenancy/users' },
  // SCIM deprovisioning: the person's membership in the connection's scope is suspended (the main
  // table), and everything that gave them access there ends in the same statement. Called through
  // AccountProvisioningService.deprovision.
  scim_deprovision_user: {
    owner: 'src/modules/tenancy/users',
    writes: ['organization_memberships', 'partner_memberships'],
    onBehalfOf: {
      sessions: 'the leaver’s sessions in that scope end with the membership',
      refresh_tokens: 'the ended sessions’ refresh tokens expire with them',
      sso_exchange_codes: 'the ended sessions’ unredeemed sign-in hand-off codes are dropped',
      api_keys: 'the keys the leaver created in that scope are revoked',
      audit_logs: 'one audit row per elevation the deprovisioning ends (the cascade itself is PAM’s app_pam_end_elevations)',
    },
  },

  // Dynamic device groups: their filters, the recompute and the triggers that keep membership in line.
  dynamic_group_like: { owner: 'src/modules/tenancy/device-groups' },
  dynamic_group_text_condition: { owner: 'src/modules/tenancy/device-groups' },
  dynamic_group_value_condition: { owner: 'src/modules/tenancy/device-groups' },
  dynamic_group_predicate: { owner: 'src/modules/tenancy/device-groups' },
  recompute_dynamic_groups: { owner: 'src/modules/tenancy/device-groups', writes: ['device_group_members'] },
  device_group_members_guard: { owner: 'src/modules/tenancy/device-groups' },
  device_groups_after_filter_change: { owner: 'src/modules/tenancy/device-groups' },
  devices_after_insert: { owner: 'src/modules/tenancy/device-groups' },
  devices_after_update: { owner: 'src/modules/tenancy/device-groups' },
  custom_field_values_after_write: { owner: 'src/modules/tenancy/device-groups' },
  custom_field_values_after_delete: { owner: 'src/modules/tenancy/device-groups' },

  // Partner-owned content visible to the partner's organizations (the content tables' read policies).
  app_partner_content_visible: { owner: 'src/modules/content' },

  // Authentication: whether the caller's session or API key is still live, checked before a write.
  app_credential_live: { owner: 'src/modules/auth' },
  // Tells every instance that a principal changed (the principal cache listens, principal-resolver.service.ts).
  app_notify_principal_change: { owner: 'src/modules/auth' },

  // Policies: the one definition of policy reach (policy resolution and ingest's context read it).
  app_applied_policies: { owner: 'src/modules/policies' },

  // Agents: what ingest reads before deciding, the devices' rate-limit buckets and the wake-up of a
  // held command wait (command-wakeups.ts listens on its channel).
  app_ingest_context: { owner: 'src/modules/agent' },
  app_agent_rate_bucket_take: { owner: 'src/modules/agent/rate-limit', writes: ['agent_rate_buckets'] },
  app_notify_agent_commands: { owner: 'src/modules/agent/commands' },

  // Privileged access: the request lifecycle.
  // Ingest's insert: the request (main table) and its `created` event; with the device's token
  // spent first through app_agent_rate_bucket_take. Called through ElevationIntakeService.
  app_ingest_insert: {
    owner: 'src/modules/pam',
    writes: ['elevation_requests', 'pam_elevation_events'],
    onBehalfOf: { audit_logs: 'the request’s audit row, the row AuditService.record would write, in the same statement (ingest is the hot path)' },
  },
  app_pam_approval_fan_out: { owner: 'src/modules/pam', writes: ['pam_approval_requests', 'push_outbox'] },
  app_pam_end_elevations: { owner: 'src/modules/pam', writes: ['elevation_requests', 'pam_elevation_events', 'pam_approval_requests', 'push_outbox', 'device_commands'] },
  app_elevation_request_counts_insert: { owner: 'src/modules/pam', writes: ['elevation_request_counts'] },
  app_elevation_request_counts_update: { owner: 'src/modules/pam', writes: ['elevation_request_counts'] },
  // The agents' command poll: hands out and withdraws PAM's device commands. Called through DeviceCommandService.
  app_agent_commands_take: { owner: 'src/modules/pam', writes: ['device_commands'] },
  app_agent_commands_take_many: { owner: 'src/modules/pam' },
  // A CHECK of signer lists (pam_signer_groups.signers).
  pam_text_elements_within: { owner: 'src/modules/pam/signer-groups' },

  // Outbound webhooks: the audit trigger that fills the outbox.
  app_webhooks_enqueue: { owner: 'src/modules/webhooks', writes: ['webhook_messages'] },
};
