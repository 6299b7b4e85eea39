import { Injectable } from '@nestjs/common';
import { RequestContext } from '../../infra/context/request-context';
import { DbService } from '../../infra/database/db.service';
import { PRINCIPAL_KEY } from '../../common/interceptors/tenant-context.interceptor';
import type { Principal } from '../../common/principal';

export interface AuditEntry {
  action: string;
  orgId?: string | null;
  partnerId?: string | null;
  resourceType?: string;
  resourceId?: string | null;
  details?: Record<string, unknown>;
  /** Defaults to the request's principal; 'system' for background work. */
  actor?: { type: 'user' | 'api_key' | 'agent' | 'system'; id: string | null };
}

function actorOf(p: Principal | undefined): { type: 'user' | 'api_key' | 'agent' | 'system'; id: string | null } {
  if (!p || p.kind === 'anonymous') return { type: 'system', id: null };
  if (p.kind === 'agent') return { type: 'agent', id: p.agent?.agentId ?? null };
  if (p.kind === 'api_key') return { type: 'api_key', id: p.apiKeyId };
  return { type: 'user', id: p.userId };
}

/**
 * Appends audit rows inside the caller's transaction, so an action and its audit row commit or
 * roll back together. The application role cannot update or delete them.
 */
@Injectable()
export class AuditService {
  constructor(
    private readonly db: DbService,
    private readonly cls: RequestContext,
  ) {}

  async record(e: AuditEntry): Promise<void> {
    const r = this.rowOf(e);
    await this.db.exec(
      `INSERT INTO audit_logs (org_id, partner_id, actor_type, actor_id, actor_user_id, action, resource_type, resource_id, details, ip, request_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [r.org_id, r.partner_id, r.actor_type, r.actor_id, r.actor_user_id, r.action, r.resource_type, r.resource_id, JSON.stringify(r.details), r.ip, r.request_id],
    );
  }

  /** Appends many rows in one statement (batch work such as the elevation expiry sweep). */
  async recordMany(entries: AuditEntry[]): Promise<void> {
    if (!entries.length) return;
    await this.db.exec(
      `INSERT INTO audit_logs (org_id, partner_id, actor_type, actor_id, actor_user_id, action, resource_type, resource_id, details, ip, request_id)
       SELECT x.org_id, x.partner_id, x.actor_type, x.actor_id, x.actor_user_id, x.action, x.resource_type, x.resource_id, x.details, x.ip, x.request_id
         FROM jsonb_to_recordset($1::jsonb) AS x(org_id uuid, partner_id uuid, actor_type text, actor_id uuid, actor_user_id uuid, action text,
                                                resource_type text, resource_id text, details jsonb, ip text, request_id text)`,
      [JSON.stringify(entries.map((e) => this.rowOf(e)))],
    );
  }

  private rowOf(e: AuditEntry) {
    const principal = this.cls.isActive() ? this.cls.get<Principal>(PRINCIPAL_KEY) : undefined;
    const actor = e.actor ?? actorOf(principal);
    return {
      org_id: e.orgId ?? null,
      partner_id: e.orgId ? null : (e.partnerId ?? null),
      actor_type: actor.type,
      actor_id: actor.id,
      // The person behind the credential, so an action taken with an API key is also the creator's.
      actor_user_id: e.actor ? (e.actor.type === 'user' ? e.actor.id : null) : (principal?.userId ?? null),
      action: e.action,
      resource_type: e.resourceType ?? null,
      resource_id: e.resourceId ?? null,
      details: e.details ?? {},
      ip: this.cls.isActive() ? (this.cls.get<string>('ip') ?? null) : null,
      request_id: this.cls.isActive() ? (this.cls.get<string>('requestId') ?? null) : null,
    };
  }
}
