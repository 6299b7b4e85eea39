import { Inject, Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { AuditService } from '../../audit/audit.service';
import { ElevationTransitionService } from '../requests/elevation-transition.service';
import { PamEventService } from '../requests/pam-event.service';
import type { FlowType } from '../rules/engine/rule.types';
import type { ActuateElevationDto, ActuationResultDto } from './actuation.dto';
import { ActuationErrors } from './actuation.errors';
import { ActuationRepository } from './actuation.repository';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';

export const DEFAULT_ACTUATION_TIMEOUT_MS = 8000;

/**
 * Flows whose approval is carried out by the agent with the dormant-admin credential: an observed
 * consent prompt is released, a just-in-time admin session is opened. A tool action runs through
 * the AI tool pipeline, not through the agent's elevation.
 */
const ACTUATABLE_FLOWS: readonly FlowType[] = ['uac_intercept', 'tech_jit_admin'];

/**
 * Device actuation (spec P4.5, docs/pam-lifecycle.md): the single-use claim approved → actuating and
 * the actuate_elevation command are written in the request's one transaction, so of any number of
 * concurrent calls exactly one queues a command.
 */
@Injectable()
export class ActuationService {
  constructor(
    private readonly repo: ActuationRepository,
    private readonly transitions: ElevationTransitionService,
    private readonly events: PamEventService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tx: TenantTransactionService,
  ) {}

  async actuate(principal: Principal, deviceId: string, dto: ActuateElevationDto): Promise<ActuationResultDto> {
    if (!this.config.pamActuatorEnabled) throw ActuationErrors.disabled();
    const device = await this.tx.withAllSites('a device of another site is refused with 403', () => this.repo.device(deviceId));
    if (!device) throw ActuationErrors.deviceNotFound();
    if (!canAccessSite(principal, device.site_id)) throw ActuationErrors.siteAccessDenied();
    if (device.status === 'decommissioned') throw ActuationErrors.deviceDecommissioned();
    const request = await this.tx.withAllSites('a request of another site is refused with 403', () => this.transitions.current(dto.elevationRequestId));
    if (!request || request.device_id !== deviceId) throw ActuationErrors.requestNotFound();
    if (!canAccessSite(principal, request.site_id)) throw ActuationErrors.siteAccessDenied();
    if (!ACTUATABLE_FLOWS.includes(request.flow_type)) throw ActuationErrors.notActuatable(request.flow_type);

    const claimed = await this.transitions.claimActuation(request.id, deviceId);
    if (!claimed) {
      const current = (await this.transitions.current(request.id))?.effective_status ?? request.effective_status;
      throw current === 'actuating' ? ActuationErrors.raceLost() : ActuationErrors.wrongStatus(current);
    }
    const timeoutMs = dto.timeoutMs ?? DEFAULT_ACTUATION_TIMEOUT_MS;
    const commandId = await this.repo.queueActuation(claimed.org_id, deviceId, request.id, timeoutMs);
    const details = { commandId, timeoutMs, deviceId };
    await this.events.record({ orgId: claimed.org_id, elevationRequestId: request.id, type: 'actuation_claimed', fromStatus: claimed.from_status, toStatus: claimed.status, details });
    await this.audit.record({ action: 'pam.elevation.actuate', orgId: claimed.org_id, resourceType: 'elevation_request', resourceId: request.id, details });
    return { success: true, commandId, elevationRequestId: request.id };
  }
}
