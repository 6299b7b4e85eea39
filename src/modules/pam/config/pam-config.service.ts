import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { requireSiteWrite, targetOrg } from '../pam-access.util';
import type { PamConfigDto, PamConfigQueryDto, PamConfigResponseDto, PutPamConfigDto } from './pam-config.dto';
import { PamConfigRepository } from './pam-config.repository';

export const DEFAULT_APPROVAL_DURATION_MINUTES = 15;

/**
 * The organization default (spec P2.4, P4.4). `settingsFor` is what the decision chain calls:
 * it answers for any organization the current transaction can see, with the defaults when
 * the organization never saved a configuration.
 */
@Injectable()
export class PamConfigService {
  constructor(
    private readonly repo: PamConfigRepository,
    private readonly audit: AuditService,
  ) {}

  async settingsFor(orgId: string): Promise<PamConfigDto> {
    const row = await this.repo.find(orgId);
    return {
      orgId,
      defaultUnmatchedVerdict: row?.default_unmatched_verdict ?? 'require_approval',
      defaultApprovalDurationMinutes: row?.default_approval_duration_minutes ?? DEFAULT_APPROVAL_DURATION_MINUTES,
    };
  }

  async get(principal: Principal, q: PamConfigQueryDto): Promise<PamConfigResponseDto> {
    return { success: true, config: await this.settingsFor(targetOrg(principal, q.orgId)) };
  }

  async put(principal: Principal, dto: PutPamConfigDto): Promise<PamConfigResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    requireSiteWrite(principal, null);
    const before = await this.settingsFor(orgId);
    const row = await this.repo.upsert(orgId, dto.defaultUnmatchedVerdict, dto.defaultApprovalDurationMinutes ?? null, principal.userId);
    const config: PamConfigDto = {
      orgId,
      defaultUnmatchedVerdict: row.default_unmatched_verdict,
      defaultApprovalDurationMinutes: row.default_approval_duration_minutes,
    };
    await this.audit.record({ action: 'pam_config.update', orgId, resourceType: 'pam_config', resourceId: orgId, details: { before, after: config } });
    return { success: true, config };
  }
}
