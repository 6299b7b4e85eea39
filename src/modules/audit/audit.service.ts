import { Injectable } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { Db } from '../../infra/database/db.service';
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
    private readonly db: Db,
    private readonly cls: ClsService,
  ) {}

  async record(e: AuditEntry): Promise<void> {
    const principal = this.cls.isActive() ? this.cls.get<Principal>(PRINCIPAL_KEY) : undefined;
    const actor = e.actor ?? actorOf(principal);
    // The person behind the credential, so an action taken with an API key is also the creator's.
    const actorUserId = e.actor ? (e.actor.type === 'user' ? e.actor.id : null) : (principal?.userId ?? null);
    const requestId = this.cls.isActive() ? (this.cls.get<string>('requestId') ?? null) : null;
    const ip = this.cls.isActive() ? (this.cls.get<string>('ip') ?? null) : null;
    await this.db.exec(
      `INSERT INTO audit_logs (org_id, partner_id, actor_type, actor_id, actor_user_id, action, resource_type, resource_id, details, ip, request_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [e.orgId ?? null, e.orgId ? null : (e.partnerId ?? null), actor.type, actor.id, actorUserId, e.action, e.resourceType ?? null, e.resourceId ?? null, JSON.stringify(e.details ?? {}), ip, requestId],
    );
  }
}
