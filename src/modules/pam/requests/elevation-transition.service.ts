import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { AuditService } from '../../audit/audit.service';
import { Actor, ElevationRequestRepository, TransitionedRow } from './elevation-request.repository';
import { PamEventService } from './pam-event.service';

export interface DecisionOptions {
  /** Approval window in minutes (approve only). */
  durationMinutes: number;
  reason: string | null;
  /** Set when the decision came from a mobile approval request: that one is decided, its siblings expire. */
  approvalRequestId?: string;
}

const actorOf = (p: Principal): Actor => ({ userId: p.userId, apiKeyId: p.apiKeyId });

/**
 * The human transitions of an elevation request, shared by the console routes and mobile
 * approvals. Each is one compare-and-swap statement; when it moves the row, the event, the audit
 * row and the side effects (sibling approval requests, device commands) are written in the same
 * transaction. When it does not, nothing is written and the caller reports the current status.
 */
@Injectable()
export class ElevationTransitionService {
  constructor(
    private readonly repo: ElevationRequestRepository,
    private readonly events: PamEventService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async decide(principal: Principal, id: string, decision: 'approve' | 'deny', o: DecisionOptions): Promise<TransitionedRow | null> {
    const ttl = this.config.pamPendingTtlMinutes;
    const row =
      decision === 'approve'
        ? await this.repo.approve(id, actorOf(principal), o.durationMinutes, o.reason, ttl)
        : await this.repo.deny(id, actorOf(principal), o.reason, ttl);
    if (!row) return null;
    const via = o.approvalRequestId ? 'mobile' : 'console';
    const details = {
      via,
      ...(o.approvalRequestId ? { approvalRequestId: o.approvalRequestId } : {}),
      ...(decision === 'approve' ? { durationMinutes: o.durationMinutes, expiresAt: row.expires_at?.toISOString() } : {}),
      ...(o.reason !== null ? { reason: o.reason } : {}),
    };
    await this.events.record({ orgId: row.org_id, elevationRequestId: id, type: decision === 'approve' ? 'approved' : 'denied', fromStatus: row.from_status, toStatus: row.status, details });
    await this.audit.record({ action: `pam.elevation.${decision}`, orgId: row.org_id, resourceType: 'elevation_request', resourceId: id, details });
    await this.repo.expireApprovalRequests(row.org_id, id, o.approvalRequestId ?? null);
    return row;
  }

  async revoke(principal: Principal, id: string, reason: string): Promise<TransitionedRow | null> {
    const row = await this.repo.revoke(id, actorOf(principal), reason);
    if (!row) return null;
    const revokeCommandId = row.from_status === 'actuating' && row.actuated_at ? await this.repo.queueRevokeOnDevice(row.org_id, row.device_id, id, 'revoked') : null;
    const details = { reason, ...(revokeCommandId ? { revokeCommandId } : {}) };
    await this.events.record({ orgId: row.org_id, elevationRequestId: id, type: 'revoked', fromStatus: row.from_status, toStatus: row.status, details });
    await this.audit.record({ action: 'pam.elevation.revoke', orgId: row.org_id, resourceType: 'elevation_request', resourceId: id, details });
    return row;
  }
}
