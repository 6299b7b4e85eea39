import { Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { DEFAULT_APPROVAL_MINUTES } from '../requests/elevation-request.service';
import { ElevationTransitionService } from '../requests/elevation-transition.service';
import type { FlowType } from '../rules/engine/rule.types';
import type { ApprovalDto, ApprovalListDto, DecideApprovalDto, DecideApprovalResultDto } from './approval.dto';
import { ApprovalErrors } from './approval.errors';
import { ApprovalRepository, ApprovalRow } from './approval.repository';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';

function toDto(a: ApprovalRow): ApprovalDto {
  return {
    id: a.id,
    elevationRequestId: a.elevation_request_id,
    orgId: a.org_id,
    deviceId: a.device_id,
    deviceHostname: a.device_hostname,
    flowType: a.flow_type as FlowType,
    subjectUsername: a.subject_username,
    targetExecutablePath: a.target_executable_path,
    targetExecutableSigner: a.target_executable_signer,
    toolName: a.tool_name,
    riskTier: a.risk_tier,
    requestedAt: a.requested_at.toISOString(),
    expiresAt: a.expires_at.toISOString(),
  };
}

/**
 * Mobile approvals (docs/pam-lifecycle.md). A decision goes through the same compare-and-swap as the
 * console's respond, on the elevation request first: of two approvers deciding at once, the
 * second finds the request no longer pending and nothing of theirs is written. Permission (the
 * route's devices:execute) and site access are those of the approver at decision time.
 */
@Injectable()
export class ApprovalService {
  constructor(
    private readonly repo: ApprovalRepository,
    private readonly transitions: ElevationTransitionService,
    private readonly tx: TenantTransactionService,
  ) {}

  async list(principal: Principal): Promise<ApprovalListDto> {
    if (principal.kind !== 'user' || !principal.userId) throw ApprovalErrors.userRequired();
    const rows = await this.repo.pendingFor(principal.userId, principal.allowedSiteIds);
    return { success: true, approvals: rows.map(toDto) };
  }

  async decide(principal: Principal, id: string, dto: DecideApprovalDto): Promise<DecideApprovalResultDto> {
    if (principal.kind !== 'user' || !principal.userId) throw ApprovalErrors.userRequired();
    const a = await this.tx.withAllSites('an approval of another site is refused with 403', () => this.repo.find(id));
    if (!a || a.approver_user_id !== principal.userId) throw ApprovalErrors.notFound();
    if (!canAccessSite(principal, a.site_id)) throw ApprovalErrors.siteAccessDenied();
    if (a.status === 'approved' || a.status === 'denied') throw ApprovalErrors.alreadyDecided(a.status);
    if (a.lapsed) throw ApprovalErrors.expired();
    if (a.status === 'expired') throw ApprovalErrors.alreadyDecided(await this.requestStatus(a.elevation_request_id));
    if (dto.decision === 'approve' && a.subject_user_id === principal.userId) throw ApprovalErrors.selfApproval();

    const moved = await this.transitions.decide(principal, a.elevation_request_id, dto.decision, {
      durationMinutes: dto.durationMinutes ?? DEFAULT_APPROVAL_MINUTES,
      reason: dto.reason || null,
      approvalRequestId: id,
    });
    if (!moved) {
      const current = await this.requestStatus(a.elevation_request_id);
      throw current === 'expired' ? ApprovalErrors.expired() : ApprovalErrors.alreadyDecided(current);
    }
    const status = dto.decision === 'approve' ? 'approved' : 'denied';
    // The request row is ours now, so nothing else can move this approval row: failing here would be a bug.
    if (!(await this.repo.decide(id, status))) throw ApprovalErrors.alreadyDecided(status);
    return { success: true, id, elevationRequestId: a.elevation_request_id, status };
  }

  private async requestStatus(elevationRequestId: string): Promise<string> {
    const row = await this.transitions.current(elevationRequestId);
    if (!row) throw ApprovalErrors.notFound();
    return row.effective_status;
  }
}
