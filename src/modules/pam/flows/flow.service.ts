import { Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { ApprovalFanoutService } from '../approvals/approval-fanout.service';
import { DecisionChainService } from '../decision/decision-chain.service';
import type { Decision } from '../decision/decision.types';
import { ElevationIntakeService } from '../requests/elevation-intake.service';
import type { FiledElevationRequest } from '../requests/elevation-intake.types';
import { PamEventService } from '../requests/pam-event.service';
import { resolveTier } from '../rules/engine/risk-tier.registry';
import type { Observation } from '../rules/engine/rule.types';
import { actionDigest } from './canonical-json.util';
import type { CreateJitRequestDto, CreateToolActionDto, FlowRequestResultDto, ToolActionResultDto } from './flow.dto';
import { FlowErrors } from './flow.errors';
import { FlowDevice, FlowRepository } from './flow.repository';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';

const AUDIT_ACTION = { pending: 'pam.elevation.request', auto_approved: 'pam.elevation.auto_approve', denied: 'pam.elevation.auto_deny' } as const;

type Recorded = Omit<FiledElevationRequest, 'status' | 'decisionSource' | 'matchedPolicyId' | 'matchedPolicyName' | 'pamRuleId' | 'pamRuleName'>;

/**
 * The request flows a person or a tool starts (docs/pam-lifecycle.md): just-in-time admin for the
 * calling technician and AI tool actions. Both go through the same decision chain as agent
 * ingest, on the server's clock, and are written like it: the request, its audit row, its
 * `created` event and, when pending, the mobile approval fan-out, in the request's transaction.
 */
@Injectable()
export class FlowService {
  constructor(
    private readonly repo: FlowRepository,
    private readonly intake: ElevationIntakeService,
    private readonly chain: DecisionChainService,
    private readonly fanout: ApprovalFanoutService,
    private readonly events: PamEventService,
    private readonly audit: AuditService,
    private readonly tx: TenantTransactionService,
  ) {}

  async requestJit(principal: Principal, dto: CreateJitRequestDto): Promise<FlowRequestResultDto> {
    if (principal.kind !== 'user' || !principal.userId) throw FlowErrors.userRequired();
    const device = await this.device(principal, dto.deviceId);
    const subject = (await this.repo.subjectName(principal.userId, null))!;
    // No rule governs tech_jit_admin: the organization default decides (pending or denied), never an automatic approval.
    const decision = await this.chain.decide(device.org_id, device.site_id, { flowType: 'tech_jit_admin', user: subject, at: device.now });
    return this.record(device, decision, {
      orgId: device.org_id,
      siteId: device.site_id,
      deviceId: device.id,
      flowType: 'tech_jit_admin',
      subjectUsername: subject,
      subjectUserId: principal.userId,
      reason: dto.reason,
      toolName: null,
      toolAction: null,
      riskTier: null,
      actionDigest: null,
      durationMinutes: dto.durationMinutes,
    });
  }

  async requestToolAction(principal: Principal, dto: CreateToolActionDto): Promise<ToolActionResultDto> {
    let digest: string;
    try {
      digest = actionDigest(dto.input);
    } catch (e) {
      throw FlowErrors.invalidInput(e instanceof Error ? e.message : 'input is not JSON');
    }
    const device = await this.device(principal, dto.deviceId);
    const subject = (await this.repo.subjectName(principal.userId, principal.apiKeyId)) ?? 'unknown caller';
    const riskTier = resolveTier(dto.toolName, dto.action);
    const observation: Observation = { flowType: 'ai_tool_action', toolName: dto.toolName, riskTier, user: subject, at: device.now };
    const decision = await this.chain.decide(device.org_id, device.site_id, observation);
    const result = await this.record(device, decision, {
      orgId: device.org_id,
      siteId: device.site_id,
      deviceId: device.id,
      flowType: 'ai_tool_action',
      subjectUsername: subject,
      subjectUserId: principal.userId,
      reason: `AI tool ${dto.toolName}${dto.action ? ` (${dto.action})` : ''} requested`,
      toolName: dto.toolName,
      toolAction: dto.action ?? null,
      riskTier,
      actionDigest: digest,
      durationMinutes: decision.outcome === 'auto_approved' ? decision.durationMinutes : null,
    });
    return { ...result, toolName: dto.toolName, riskTier, actionDigest: digest };
  }

  private async device(principal: Principal, deviceId: string): Promise<FlowDevice> {
    const device = await this.tx.withAllSites('a device of another site is refused with 403', () => this.repo.device(deviceId));
    if (!device) throw FlowErrors.deviceNotFound();
    if (!canAccessSite(principal, device.site_id)) throw FlowErrors.siteAccessDenied();
    if (device.status === 'decommissioned') throw FlowErrors.deviceDecommissioned();
    return device;
  }

  private async record(device: FlowDevice, decision: Decision, r: Recorded): Promise<FlowRequestResultDto> {
    // Only the chain's final outcomes are stored as such; `ignored` is never final for a request someone made.
    const status = decision.outcome === 'ignored' ? 'pending' : decision.outcome;
    const final = status !== 'pending';
    const created = await this.intake.createFiled({
      ...r,
      status,
      durationMinutes: status === 'denied' ? null : r.durationMinutes,
      decisionSource: final ? decision.source : null,
      matchedPolicyId: decision.policy?.id ?? null,
      matchedPolicyName: decision.policy?.name ?? null,
      pamRuleId: decision.rule?.id ?? null,
      pamRuleName: decision.rule?.name ?? null,
    });
    const details = {
      flowType: r.flowType,
      deviceId: device.id,
      status,
      decisionSource: decision.source,
      pamRuleId: decision.rule?.id ?? null,
      pamRuleName: decision.rule?.name ?? null,
      durationMinutes: status === 'auto_approved' ? r.durationMinutes : null,
      ...(r.toolName ? { toolName: r.toolName, toolAction: r.toolAction, riskTier: r.riskTier, actionDigest: r.actionDigest } : {}),
      ...(decision.error ? { evaluatorError: decision.error } : {}),
    };
    await this.audit.record({ action: AUDIT_ACTION[status], orgId: device.org_id, resourceType: 'elevation_request', resourceId: created.id, details });
    await this.events.record({ orgId: device.org_id, elevationRequestId: created.id, type: 'created', fromStatus: null, toStatus: status, details });
    if (status === 'pending') await this.fanout.fanOut({ id: created.id, orgId: device.org_id });
    return { success: true, id: created.id, status, expiresAt: created.expires_at ? created.expires_at.toISOString() : null };
  }
}
