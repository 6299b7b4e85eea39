import { prepared } from './db.service';

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
}

export const NO_SCOPE: TenantScope = Object.freeze({ scope: null, orgIds: [], partnerIds: [], userId: null, partnerWide: false });
export const SYSTEM_SCOPE: TenantScope = Object.freeze({ scope: 'system', orgIds: [], partnerIds: [], userId: null, partnerWide: false });

export const APPLY_SCOPE_SQL = prepared(
  'tenant_scope_apply',
  `SELECT set_config('app.scope', $1, true), set_config('app.org_ids', $2, true), ` +
  `set_config('app.partner_ids', $3, true), set_config('app.user_id', $4, true), set_config('app.partner_wide', $5, true)`,
);

export function scopeParams(s: TenantScope): string[] {
  return [s.scope ?? '', `{${s.orgIds.join(',')}}`, `{${s.partnerIds.join(',')}}`, s.userId ?? '', s.partnerWide ? 'on' : ''];
}
