import { Injectable } from '@nestjs/common';
import { RequestContext } from '../../infra/context/request-context';
import { MetricsService } from '../../infra/metrics/metrics.service';
import type { Principal } from '../../common/principal';
import { ApprovalFanoutService } from '../pam/approvals/approval-fanout.service';
import { DecisionChainService } from '../pam/decision/decision-chain.service';
import type { Decision } from '../pam/decision/decision.types';
import { ElevationIntakeService } from '../pam/requests/elevation-intake.service';
import type { ObservedElevationRequest } from '../pam/requests/elevation-intake.types';
import { AgentErrors } from './agent.errors';
import type { ElevationIngestDto, ElevationIngestResultDto } from './dto/elevation-ingest.dto';
import { ElevationIngestRepository, IngestContext } from './elevation-ingest.repository';
import { DeviceRateLimiter, INGEST_BURST, INGEST_RATE_PER_SECOND } from './rate-limit/device-rate-limiter';
import { DATABASE_RETRY_AFTER_SECONDS } from './rate-limit/postgres-rate-limiter.service';

const AUDIT_ACTION = { pending: 'pam.elevation.request', auto_approved: 'pam.elevation.auto_approve', denied: 'pam.elevation.auto_deny' } as const;

function executableName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/**
 * Agent ingest of an observed elevation prompt (spec P4.6): the device comes from the agent
 * token, never from the body or a header; the decision chain runs on the server's clock; the
 * request row, its audit row, its `created` event and, when pending, the approval requests of
 * the eligible technicians are written in the request's one transaction. The request is created
 * by PAM (ElevationIntakeService), with its audit row and event in one statement because ingest is
 * the service's hot path.
 */
@Injectable()
export class ElevationIngestService {
  constructor(
    private readonly repo: ElevationIngestRepository,
    private readonly intake: ElevationIntakeService,
    private readonly chain: DecisionChainService,
    private readonly limiter: DeviceRateLimiter,
    private readonly fanout: ApprovalFanoutService,
    private readonly cls: RequestContext,
    private readonly metrics: MetricsService,
  ) {}

  async ingest(principal: Principal, dto: ElevationIngestDto): Promise<ElevationIngestResultDto> {
    const { orgId, deviceId, agentId } = principal.agent!;
    if (this.limiter.placement === 'standalone') await this.throttle(orgId, deviceId);
    const ctx = await this.repo.context(orgId, deviceId);
    if (!ctx) throw AgentErrors.deviceNotFound();
    if (ctx.deviceStatus === 'decommissioned') throw AgentErrors.deviceDecommissioned();
    const decision = await this.decide(orgId, ctx, dto);
    if (decision.outcome === 'ignored') {
      if (this.limiter.placement === 'database') await this.throttle(orgId, deviceId);
      this.metrics.ingestDecision('ignored', 'uac_intercept');
      return { id: null, status: 'ignored' };
    }
    const result = await this.record({ orgId, deviceId, agentId }, ctx, dto, decision, decision.outcome);
    this.metrics.ingestDecision(decision.outcome, 'uac_intercept');
    return result;
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
      { software: ctx.software, defaults: ctx.defaults, rulesVersion: ctx.rulesVersion },
    );
  }

  private async record(
    { orgId, deviceId, agentId }: { orgId: string; deviceId: string; agentId: string },
    ctx: IngestContext,
    dto: ElevationIngestDto,
    decision: Decision,
    status: 'pending' | 'auto_approved' | 'denied',
  ): Promise<ElevationIngestResultDto> {
    const final = status !== 'pending';
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
    const request: ObservedElevationRequest = {
      flowType: 'uac_intercept',
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
    };
    const cls = this.cls.isActive() ? this.cls : null;
    const log = { agentId, auditAction: AUDIT_ACTION[status], details, requestId: cls?.get<string>('requestId') ?? null, ip: cls?.get<string>('ip') ?? null };
    // A database bucket is spent by the insert itself, last, so its row stays locked only until commit.
    const bucket = this.limiter.placement === 'database' ? { burst: INGEST_BURST, ratePerSecond: INGEST_RATE_PER_SECOND } : null;
    const created = await this.intake.createObserved(request, log, bucket);
    if (!created) throw AgentErrors.rateLimited(DATABASE_RETRY_AFTER_SECONDS);
    if (status === 'pending') await this.fanout.fanOut({ id: created.id, orgId });
    return { id: created.id, status };
  }
}
