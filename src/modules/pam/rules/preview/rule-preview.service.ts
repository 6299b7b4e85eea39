import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../../../../common/principal';
import { APP_CONFIG, type AppConfig } from '../../../../infra/config/app-config';
import { NO_SCOPE, type TenantScope } from '../../../../infra/database/tenant-scope';
import { TenantTransactionService } from '../../../../infra/database/tenant-transaction.service';
import { PamErrors } from '../../pam.errors';
import { targetOrg } from '../../pam-access.util';
import { SignerGroupRepository } from '../../signer-groups/signer-group.repository';
import type { SqlRuleInput } from '../engine/rule-sql.util';
import type { PamRulePreviewDto, PreviewPamRuleDto } from '../pam-rule.dto';
import { PamRuleRepository } from '../pam-rule.repository';
import { newRuleWrite, ruleShapeError, type RuleInput } from '../rule-write.util';
import {
  addBucketRows,
  cutAtLimit,
  emptyCounts,
  sampleBuckets,
  SAMPLE_SIZE,
  sumMatched,
  totalScanned,
  firstSlice,
  nextSlice,
  windowStartOf,
  type Bucket,
} from './preview-plan.util';
import { RulePreviewRepository, type PartialBucket, type ScanScope } from './rule-preview.repository';

export const DEFAULT_PREVIEW_WINDOW_DAYS = 30;

/**
 * Rule preview (spec P4.2): how many of the organization's recent requests a draft rule
 * would match on its own, ignoring priority and the software-policy bridge. The match runs
 * in PostgreSQL (the engine's SQL twin, proven equal to the in-memory matcher by
 * test/integration/pam/preview-agreement.test.ts); see preview-plan.util.ts for how the
 * window is scanned, cut at PAM_PREVIEW_SCAN_LIMIT and sampled.
 *
 * A draft is checked like a rule being saved (shape, site and signer group of the
 * organization), so a preview never describes a rule that could not exist. A
 * site-restricted caller previews over the requests of their sites only. Stored requests
 * keep no directory groups, so a draft with matchAdGroup matches nothing.
 */
@Injectable()
export class RulePreviewService {
  constructor(
    private readonly repo: RulePreviewRepository,
    private readonly rules: PamRuleRepository,
    private readonly signerGroups: SignerGroupRepository,
    private readonly tx: TenantTransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async preview(principal: Principal, dto: PreviewPamRuleDto): Promise<PamRulePreviewDto> {
    const orgId = targetOrg(principal, dto.orgId);
    const { orgId: _org, windowDays = DEFAULT_PREVIEW_WINDOW_DAYS, flowType, ...criteria } = dto;
    const draft = newRuleWrite({ ...(criteria as RuleInput), name: 'preview', verdict: 'require_approval' });
    const shape = ruleShapeError(draft);
    if (shape) throw shape;
    // Narrowed to the one organization: row-level security then compares each row with a
    // one-element list, however many organizations a partner technician reaches.
    const narrowed: TenantScope = { ...NO_SCOPE, scope: principal.scope, orgIds: [orgId], userId: principal.userId };
    return this.tx.run(narrowed, async () => {
      if (draft.siteId && !(await this.rules.siteBelongsToOrg(orgId, draft.siteId))) throw PamErrors.siteOutsideOrg();
      let signerGroupSigners: string[] | null = null;
      if (draft.matchSignerGroupId) {
        const group = await this.signerGroups.findInOrg(orgId, draft.matchSignerGroupId);
        if (!group) throw PamErrors.signerGroupOutsideOrg();
        signerGroupSigners = group.signers;
      }
      const input: SqlRuleInput = { ...draft, signerGroupSigners };
      const asOf = await this.repo.now();
      const windowStart = windowStartOf(asOf, windowDays);
      const scope: ScanScope = { orgId, windowStart, asOf, flowType: flowType ?? null, siteIds: principal.allowedSiteIds };
      return { success: true, windowDays, ...(await this.scan(scope, input)) };
    });
  }

  private async scan(scope: ScanScope, input: SqlRuleInput) {
    const limit = this.config.pamPreviewScanLimit;
    const buckets = new Map<number, Bucket>();
    let slice = firstSlice(scope.asOf, scope.windowStart);
    for (;;) {
      addBucketRows(buckets, await this.repo.bucketCounts(scope, input, slice));
      const scanned = totalScanned(buckets);
      const next = scanned > limit ? null : nextSlice(scope.asOf, scope.windowStart, slice.from, scanned, limit);
      if (!next) break;
      slice = next;
    }
    const cut = cutAtLimit(buckets, limit);
    const counted = [...cut.whole];
    let cutPoint: PartialBucket['cut'] = null;
    if (cut.partial) {
      const start = new Date(cut.partial.bucket.start);
      const partial = await this.repo.partialBucket(scope, input, start, cut.partial.keep);
      const kept = new Map<number, Bucket>();
      addBucketRows(kept, partial.rows.map((row) => ({ bucket: start, ...row })));
      counted.push(kept.get(start.getTime()) ?? { start: start.getTime(), scanned: 0, matched: 0, matchedByStatus: emptyCounts() });
      cutPoint = partial.cut;
    }
    const { matched, byStatus } = sumMatched(counted);
    const sampleStarts = sampleBuckets(counted).map((start) => new Date(start));
    const sample = await this.repo.sample(scope, input, sampleStarts, cutPoint, SAMPLE_SIZE);
    return {
      totalMatched: matched,
      totalScanned: counted.reduce((sum, bucket) => sum + bucket.scanned, 0),
      truncated: cut.truncated,
      statusBreakdown: byStatus,
      sample: sample.map((row) => ({ id: row.id, requestedAt: row.requested_at.toISOString(), flowType: row.flow_type, status: row.status })),
    };
  }
}
