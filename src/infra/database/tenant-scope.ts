import { literal } from './sql-text';

/** The row-level-security settings of one transaction (docs/architecture.md: request path and row-level security). */
export interface TenantScope {
  scope: 'organization' | 'partner' | 'system' | null;
  orgIds: readonly string[];
  partnerIds: readonly string[];
  userId: string | null;
  /**
   * The caller may create, change and delete partner-owned rows of its partner: a technician whose
   * partner membership reaches all organizations (or a key acting for one). Read by
   * app_has_partner_write() in the database. Absent means false.
   */
  partnerWide?: boolean;
  /**
   * The sites a site-restricted caller reaches (read by app_has_site_access() in the restrictive
   * site policies, migration 1763700950000). Absent or null: every site of its organizations.
   */
  siteIds?: readonly string[] | null;
  /**
   * The person on whose behalf the request acts (the signed-in user, an API key's creator, a SCIM
   * connection's administrator), kept through system context: the database's person-change guard
   * (app_guard_person_change, migration 1763701900000) asks whether this person may act on the
   * person a statement changes. Absent or null: no person acts (sign-in, jobs).
   */
  actorId?: string | null;
}

export const NO_SCOPE: TenantScope = Object.freeze({ scope: null, orgIds: [], partnerIds: [], userId: null, partnerWide: false, siteIds: null });
export const SYSTEM_SCOPE: TenantScope = Object.freeze({ scope: 'system', orgIds: [], partnerIds: [], userId: null, partnerWide: false, siteIds: null });

export function scopeParams(s: TenantScope): string[] {
  return [s.scope ?? '', `{${s.orgIds.join(',')}}`, `{${s.partnerIds.join(',')}}`, s.userId ?? '', s.partnerWide ? 'on' : '', s.siteIds ? `{${s.siteIds.join(',')}}` : '', s.actorId ?? ''];
}

/**
 * The statement that sets a transaction's row-level-security settings, with the values as
 * literals so that it travels in one message with BEGIN and the transaction's first statement
 * (db.service.ts, Tx). `set_config(..., true)`: the settings end with the transaction, so
 * nothing outlives it on a pooled server connection.
 */
export function scopeStatement(s: TenantScope): string {
  const [scope, orgIds, partnerIds, userId, partnerWide, siteIds, actorId] = scopeParams(s).map(literal);
  return (
    `SELECT set_config('app.scope', ${scope}, true), set_config('app.org_ids', ${orgIds}, true), ` +
    `set_config('app.partner_ids', ${partnerIds}, true), set_config('app.user_id', ${userId}, true), set_config('app.partner_wide', ${partnerWide}, true), ` +
    `set_config('app.site_ids', ${siteIds}, true), set_config('app.actor_id', ${actorId}, true)`
  );
}
