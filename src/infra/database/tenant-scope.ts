import { prepared } from './db.service';

/** The row-level-security settings of one transaction (ARCHITECTURE.md: tenancy and RLS). */
export interface TenantScope {
  scope: 'organization' | 'partner' | 'system' | null;
  orgIds: readonly string[];
  partnerIds: readonly string[];
  userId: string | null;
}

export const NO_SCOPE: TenantScope = Object.freeze({ scope: null, orgIds: [], partnerIds: [], userId: null });
export const SYSTEM_SCOPE: TenantScope = Object.freeze({ scope: 'system', orgIds: [], partnerIds: [], userId: null });

export const APPLY_SCOPE_SQL = prepared(
  'tenant_scope_apply',
  `SELECT set_config('app.scope', $1, true), set_config('app.org_ids', $2, true), ` +
  `set_config('app.partner_ids', $3, true), set_config('app.user_id', $4, true)`,
);

export function scopeParams(s: TenantScope): string[] {
  return [s.scope ?? '', `{${s.orgIds.join(',')}}`, `{${s.partnerIds.join(',')}}`, s.userId ?? ''];
}
