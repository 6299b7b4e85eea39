import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';
import { AuditLogDto, AuditLogListDto, ListAuditLogsQueryDto } from './dto/audit.dto';

/** Reads the audit trail; row-level security limits it to the caller's tenants. */
@Injectable()
export class AuditQueryService {
  constructor(private readonly db: DbService) {}

  async list(q: ListAuditLogsQueryDto): Promise<AuditLogListDto> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (q.action?.endsWith('*')) add(`action LIKE ? || '%'`, q.action.slice(0, -1).replace(/[%_\\]/g, '\\$&'));
    else if (q.action) add('action = ?', q.action);
    if (q.actorId) add('actor_id = ?', q.actorId);
    if (q.actorType) add('actor_type = ?', q.actorType);
    if (q.actorUserId) add('actor_user_id = ?', q.actorUserId);
    if (q.resourceType) add('resource_type = ?', q.resourceType);
    if (q.resourceId) add('resource_id = ?', q.resourceId);
    if (q.orgId) add('org_id = ?', q.orgId);
    if (q.from) add('created_at >= ?', q.from);
    if (q.to) add('created_at <= ?', q.to);
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [count] = await this.db.rows<{ total: string }>(`SELECT count(*) AS total FROM audit_logs ${filter}`, params);
    // Bound, never spliced: a page of 1e308 is an offset of Infinity, which PostgreSQL refuses as a value (400).
    const rows = await this.db.rows<Record<string, unknown>>(
      `SELECT * FROM audit_logs ${filter} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, (page - 1) * limit],
    );
    return { success: true, auditLogs: rows.map(toAuditLogDto), pagination: { page, limit, total: Number(count.total) } };
  }
}

/** An audit row as the API answers it: the list, and each line of the export. */
export function toAuditLogDto(r: Record<string, unknown>): AuditLogDto {
  return {
    id: r.id as string,
    orgId: (r.org_id as string) ?? null,
    partnerId: (r.partner_id as string) ?? null,
    actorType: r.actor_type as string,
    actorId: (r.actor_id as string) ?? null,
    actorUserId: (r.actor_user_id as string) ?? null,
    action: r.action as string,
    resourceType: (r.resource_type as string) ?? null,
    resourceId: (r.resource_id as string) ?? null,
    details: (r.details as Record<string, unknown>) ?? {},
    ip: (r.ip as string) ?? null,
    requestId: (r.request_id as string) ?? null,
    createdAt: new Date(r.created_at as string).toISOString(),
  };
}
