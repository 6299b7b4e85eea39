import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/principal';
import { AuditService } from '../audit/audit.service';
import { ApprovalFanoutService } from '../pam/approvals/approval-fanout.service';
import { DecisionChainService } from '../pam/decision/decision-chain.service';
import type { Decision } from '../pam/decision/decision.types';
import { PamEventService } from '../pam/requests/pam-event.service';
import { AgentErrors } from './agent.errors';
import type { ElevationIngestDto, ElevationIngestResultDto } from './dto/elevation-ingest.dto';
import { ElevationIngestRepository, IngestContext } from './elevation-ingest.repository';
import { DeviceRateLimiter } from './rate-limit/device-rate-limiter';

const AUDIT_ACTION = { pending: 'pam.elevation.request', auto_approved: 'pam.elevation.auto_approve', denied: 'pam.elevation.auto_deny' } as const;

function executableName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/**
 * Agent ingest of an observed elevation prompt (pam.md 4.6): the device comes from the agent
 * token, never from the body or a header; the decision chain runs on the server's clock; the
 * request row, its audit row, its `created` event and, when pending, the approval requests of
 * the eligible technicians are written in the request's one transaction.
 */
@Injectable()
export class ElevationIngestService {
  constructor(
    private readonly repo: ElevationIngestRepository,
    private readonly chain: DecisionChainService,
    private readonly limiter: DeviceRateLimiter,
    private readonly audit: AuditService,
    private readonly events: PamEventService,
    private readonly fanout: ApprovalFanoutService,
  ) {}

  async ingest(principal: Principal, dto: ElevationIngestDto): Promise<ElevationIngestResultDto> {
    const { orgId, deviceId } = principal.agent!;
    if (this.limiter.placement === 'standalone') await this.throttle(orgId, deviceId);
    const ctx = await this.repo.context(orgId, deviceId);
    if (!ctx) throw AgentErrors.deviceNotFound();
    if (ctx.deviceStatus === 'decommissioned') throw AgentErrors.deviceDecommissioned();
    const decision = await this.decide(orgId, ctx, dto);
    // Last before the writes: the PostgreSQL bucket row stays locked until commit.
    if (this.limiter.placement === 'transaction') await this.throttle(orgId, deviceId);
    if (decision.outcome === 'ignored') return { id: null, status: 'ignored' };
    return this.record(orgId, deviceId, ctx, dto, decision, decision.outcome);
  }

  private async throttle(orgId: string, deviceId: string): Promise<void> {
    const rate = await this.limiter.take(orgId, deviceId);
    if (!rate.allowed) throw AgentErrors.rateLimited(rate.retryAfterSeconds);
  }

  private decide(orgId: string, ctx: IngestContext, dto: ElevationIngestDto): Promise<Decision> {
    return this.chain.decide(
      orgId,
      ctx.siteId,
      {
        flowType: 'uac_intercept',
        path: dto.target_executable_path,
        hash: dto.target_executable_hash,
        signer: dto.target_executable_signer ?? null,
        parentImage: dto.parent_image ?? null,
        commandLine: dto.command_line ?? null,
        user: dto.subject_username,
        at: ctx.now,
      },
      { software: ctx.software, defaults: ctx.defaults },
    );
  }

  private async record(
    orgId: string,
    deviceId: string,
    ctx: IngestContext,
    dto: ElevationIngestDto,
    decision: Decision,
    status: 'pending' | 'auto_approved' | 'denied',
  ): Promise<ElevationIngestResultDto> {
    const final = status !== 'pending';
    const created = await this.repo.insert({
      orgId,
      siteId: ctx.siteId,
      deviceId,
      status,
      subjectUsername: dto.subject_username,
      targetExecutablePath: dto.target_executable_path,
      targetExecutableHash: dto.target_executable_hash,
      targetExecutableSigner: dto.target_executable_signer ?? null,
      parentImage: dto.parent_image ?? null,
      commandLine: dto.command_line ?? null,
      pid: dto.pid ?? null,
      observedAt: dto.observed_at ?? null,
      reason: `Elevation prompt for ${executableName(dto.target_executable_path)} observed by the agent`,
      decisionSource: final ? decision.source : null,
      durationMinutes: status === 'auto_approved' ? decision.durationMinutes : null,
      matchedPolicyId: decision.policy?.id ?? null,
      matchedPolicyName: decision.policy?.name ?? null,
      pamRuleId: decision.rule?.id ?? null,
      pamRuleName: decision.rule?.name ?? null,
      softwareEvidence: decision.evidence,
    });
    const details = {
      flowType: 'uac_intercept',
      deviceId,
      status,
      decisionSource: decision.source,
      pamRuleId: decision.rule?.id ?? null,
      pamRuleName: decision.rule?.name ?? null,
      softwarePolicyId: decision.policy?.id ?? null,
      softwarePolicyName: decision.policy?.name ?? null,
      durationMinutes: status === 'auto_approved' ? decision.durationMinutes : null,
      softwareEvidence: decision.evidence.length,
      ...(decision.error ? { evaluatorError: decision.error } : {}),
    };
    await this.audit.record({ action: AUDIT_ACTION[status], orgId, resourceType: 'elevation_request', resourceId: created.id, details });
    await this.events.record({ orgId, elevationRequestId: created.id, type: 'created', fromStatus: null, toStatus: status, details });
    if (status === 'pending') await this.fanout.fanOut({ id: created.id, orgId });
    return { id: created.id, status };
  }
}
