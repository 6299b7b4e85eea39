import { Inject, Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { requireOrg } from '../../../common/tenant-access.util';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import type {
  ActiveElevationListDto,
  ElevationEventDto,
  ElevationRequestDetailDto,
  ElevationRequestDto,
  ElevationRequestListDto,
  ElevationTransitionResultDto,
  ListElevationRequestsQueryDto,
  RespondElevationRequestDto,
  RevokeElevationRequestDto,
} from './elevation-request.dto';
import { ElevationRequestErrors } from './elevation-request.errors';
import { ElevationRequestRepository } from './elevation-request.repository';
import type { DecisionSource, ElevationRequestListRow } from './elevation-request.types';
import { ElevationTransitionService } from './elevation-transition.service';
import { PamEventRepository, StoredPamEvent } from './pam-event.repository';

export const ACTIVE_LIST_LIMIT = 500;
export const DEFAULT_APPROVAL_MINUTES = 15;

/**
 * decisionSource of spec P2.1, derived from the stored columns: a person who approved or denied
 * makes it human; a request that was never decided (still pending, or expired while pending) has
 * none; otherwise the software policy or PAM rule that decided. A decision of the organization
 * default has no value in the spec's list and is shown as null.
 */
export function decisionSourceOf(r: Pick<ElevationRequestListRow, 'status' | 'expires_at' | 'decision_source' | 'approved_by_name' | 'denied_by_name'>): DecisionSource | null {
  if (r.decision_source === 'human' || r.approved_by_name || r.denied_by_name) return 'human';
  if (r.status === 'pending' || (r.status === 'expired' && !r.expires_at)) return null;
  if (r.decision_source === 'software_policy' || r.decision_source === 'pam_rule') return r.decision_source;
  return null;
}

export function toElevationRequestDto(r: ElevationRequestListRow): ElevationRequestDto {
  const dto: ElevationRequestDto = {
    id: r.id,
    orgId: r.org_id,
    siteId: r.site_id,
    deviceId: r.device_id,
    deviceHostname: r.device_hostname,
    siteName: r.site_name,
    flowType: r.flow_type,
    status: r.effective_status,
    subjectUsername: r.subject_username,
    targetExecutablePath: r.target_executable_path,
    targetExecutableSigner: r.target_executable_signer,
    requestedAt: r.requested_at,
    approvedByName: r.approved_by_name,
    deniedByName: r.denied_by_name,
    revokedByName: r.revoked_by_name,
    matchedPolicyName: r.matched_policy_name,
    pamRuleId: r.pam_rule_id,
    pamRuleName: r.pam_rule_name,
    decisionSource: decisionSourceOf(r),
    expiresAt: r.expires_at,
  };
  if (r.flow_type === 'ai_tool_action') {
    dto.toolName = r.tool_name;
    dto.riskTier = r.risk_tier;
    dto.actionDigest = r.action_digest;
  }
  return dto;
}

function toEventDto(e: StoredPamEvent): ElevationEventDto {
  return {
    id: e.id,
    type: e.type,
    fromStatus: e.from_status,
    toStatus: e.to_status,
    actorType: e.actor_type,
    actorId: e.actor_id,
    details: e.details,
    createdAt: e.created_at.toISOString(),
  };
}

/** The request queue (spec P4.1): reads filtered to the caller's sites, writes outside them refused. */
@Injectable()
export class ElevationRequestService {
  constructor(
    private readonly repo: ElevationRequestRepository,
    private readonly eventsRepo: PamEventRepository,
    private readonly transitions: ElevationTransitionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tx: TenantTransactionService,
  ) {}

  async list(principal: Principal, q: ListElevationRequestsQueryDto): Promise<ElevationRequestListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    const from = q.from ? new Date(q.from) : undefined;
    const to = q.to ? new Date(q.to) : undefined;
    if (from && to && from > to) throw ElevationRequestErrors.invalidRange();
    const page = q.page ?? 1;
    const limit = q.limit ?? 50;
    const { rows, total } = await this.repo.list(
      { orgIds: principal.orgIds, orgId: q.orgId, status: q.status, flowType: q.flowType, deviceId: q.deviceId, siteId: q.siteId, from, to, siteIds: principal.allowedSiteIds },
      this.config.pamPendingTtlMinutes,
      { limit, offset: (page - 1) * limit },
    );
    return { success: true, requests: rows.map(toElevationRequestDto), pagination: { page, limit, total } };
  }

  async active(principal: Principal): Promise<ActiveElevationListDto> {
    const rows = await this.repo.active(principal.orgIds, principal.allowedSiteIds, ACTIVE_LIST_LIMIT);
    return { success: true, active: rows.map(toElevationRequestDto) };
  }

  async get(principal: Principal, id: string): Promise<ElevationRequestDetailDto> {
    const row = await this.repo.find(id, this.config.pamPendingTtlMinutes);
    if (!row || !canAccessSite(principal, row.site_id)) throw ElevationRequestErrors.notFound();
    const events = await this.eventsRepo.forRequest(row.org_id, id);
    return { success: true, request: toElevationRequestDto(row), events: events.map(toEventDto) };
  }

  async respond(principal: Principal, id: string, dto: RespondElevationRequestDto): Promise<ElevationTransitionResultDto> {
    const row = await this.writable(principal, id);
    // The person deciding, also behind an API key (its creator). Without one, nobody can tell the
    // approver from the subject. Whoever filed a request (a JIT request, an AI tool action) never approves it.
    if (dto.decision === 'approve' && (principal.userId === null || row.subject_user_id === principal.userId)) {
      throw ElevationRequestErrors.selfApproval();
    }
    const moved = await this.transitions.decide(principal, id, dto.decision, {
      durationMinutes: dto.durationMinutes ?? DEFAULT_APPROVAL_MINUTES,
      reason: dto.reason || null,
    });
    if (!moved) throw ElevationRequestErrors.notPending(await this.currentStatus(id));
    return { success: true, id, status: moved.status };
  }

  async revoke(principal: Principal, id: string, dto: RevokeElevationRequestDto): Promise<ElevationTransitionResultDto> {
    await this.writable(principal, id);
    const moved = await this.transitions.revoke(principal, id, dto.reason);
    if (!moved) throw ElevationRequestErrors.notActive(await this.currentStatus(id));
    return { success: true, id, status: moved.status };
  }

  private async writable(principal: Principal, id: string): Promise<ElevationRequestListRow> {
    const row = await this.tx.withAllSites('a request of another site is refused with 403', () => this.repo.find(id, this.config.pamPendingTtlMinutes));
    if (!row) throw ElevationRequestErrors.notFound();
    if (!canAccessSite(principal, row.site_id)) throw ElevationRequestErrors.siteAccessDenied();
    return row;
  }

  /** Re-read after a lost compare-and-swap: the status that made it fail, deadlines applied. */
  private async currentStatus(id: string) {
    const row = await this.repo.find(id, this.config.pamPendingTtlMinutes);
    if (!row) throw ElevationRequestErrors.notFound();
    return row.effective_status;
  }
}
