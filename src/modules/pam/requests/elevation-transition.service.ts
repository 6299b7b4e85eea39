import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { AuditService } from '../../audit/audit.service';
import { Actor, ElevationRequestRepository, TransitionedRow } from './elevation-request.repository';
import type { ElevationRequestListRow } from './elevation-request.types';
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
 * The transitions of an elevation request, the way other PAM modules and the agent's commands
 * reach the request queue (none of them reads its repository): the human decisions shared by the
 * console routes and mobile approvals, and the actuation steps (the claim of the actuate route,
 * the result the device reports). Each is one compare-and-swap statement; when it moves the row,
 * the event, the audit row and the side effects (sibling approval requests, device commands) are
 * written in the same transaction. When it does not, nothing is written and the caller reports
 * the current status.
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

  /** The request as the caller may see it, its status with the pending TTL applied; null when not visible. */
  current(id: string): Promise<ElevationRequestListRow | null> {
    return this.repo.find(id, this.config.pamPendingTtlMinutes);
  }

  /** approved → actuating on the request's device, once: null when the request is not approved (or another claim won). */
  claimActuation(id: string, deviceId: string): Promise<TransitionedRow | null> {
    return this.repo.claimActuation(id, deviceId);
  }

  /**
   * The device's result of an actuate_elevation command. A failure returns the request to
   * approved while its window is open, so it can be actuated again; a completion leaves it
   * actuating until its expiresAt. The event records the result either way.
   */
  async recordActuationResult(orgId: string, elevationRequestId: string, commandId: string, status: 'completed' | 'failed', error: string | null): Promise<void> {
    const details = { commandId, ...(error ? { error } : {}) };
    const type = status === 'completed' ? 'actuation_completed' : 'actuation_failed';
    const released = status === 'failed' ? await this.repo.releaseActuation(elevationRequestId) : null;
    if (released) {
      await this.events.record({ orgId, elevationRequestId, type, fromStatus: released.from_status, toStatus: released.status, details });
      return;
    }
    // No transition (completed, or a failure after the request was revoked or expired): the event still records the result.
    const current = await this.current(elevationRequestId);
    if (current) await this.events.record({ orgId, elevationRequestId, type, fromStatus: current.effective_status, toStatus: current.effective_status, details });
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
