import { Injectable } from '@nestjs/common';
import { canAccessSite, type Principal } from '../../../common/principal';
import { pgViolation } from '../../../common/errors/pg-error.util';
import { AuditService } from '../../audit/audit.service';
import { PamErrors } from '../pam.errors';
import { requireOrg, requireSiteWrite, targetOrg } from '../pam-access.util';
import { SignerGroupRepository } from '../signer-groups/signer-group.repository';
import type {
  CreatePamRuleDto,
  ListPamRulesQueryDto,
  PamRuleListDto,
  PamRuleResponseDto,
  PamSuccessDto,
  UpdatePamRuleDto,
} from './pam-rule.dto';
import { PamRuleRepository, type PamRuleRow, type PamRuleWrite } from './pam-rule.repository';
import { toRuleDto, toRuleWrite } from './pam-rule-row.util';
import { mergeRuleWrite, newRuleWrite, ruleShapeError, type RuleInput } from './rule-write.util';
import { PamRuleListCacheService } from './rule-list-cache.service';
import { RulesVersionRepository } from './rules-version.repository';

/**
 * PAM rules (spec P2.2, P4.2). Every write checks, in order: the caller reaches the rule's
 * organization (else 404) and its site (else 403 site_access_denied; an organization-wide
 * rule is outside any site list), the shape rules of 4.2 on the complete rule (400), and
 * that the site and signer group belong to that organization (400). The write bumps the
 * organization's rules version in the same transaction.
 */
@Injectable()
export class PamRuleService {
  constructor(
    private readonly rules: PamRuleRepository,
    private readonly signerGroups: SignerGroupRepository,
    private readonly versions: RulesVersionRepository,
    private readonly audit: AuditService,
    private readonly lists: PamRuleListCacheService,
  ) {}

  async list(principal: Principal, q: ListPamRulesQueryDto): Promise<PamRuleListDto> {
    if (q.orgId) requireOrg(principal, q.orgId);
    const rules = await this.lists.rulesOf(q.orgId ? [q.orgId] : principal.orgIds);
    const sites = principal.allowedSiteIds;
    // A site-restricted caller sees the rules of their sites; organization-wide rules are outside them.
    return { success: true, rules: sites === null ? rules : rules.filter((r) => r.siteId !== null && sites.includes(r.siteId)) };
  }

  async create(principal: Principal, dto: CreatePamRuleDto): Promise<PamRuleResponseDto> {
    const orgId = targetOrg(principal, dto.orgId);
    const { orgId: _target, ...input } = dto;
    const rule = newRuleWrite(input as RuleInput & Pick<PamRuleWrite, 'name' | 'verdict'>);
    requireSiteWrite(principal, rule.siteId);
    await this.checkReferences(orgId, rule, null);
    const row = await this.write(() => this.rules.insert(orgId, principal.userId, rule));
    await this.versions.bump(orgId);
    await this.audit.record({ action: 'pam_rule.create', orgId, resourceType: 'pam_rule', resourceId: row.id, details: { name: row.name, verdict: row.verdict, siteId: row.site_id } });
    return { success: true, rule: toRuleDto(row) };
  }

  async update(principal: Principal, id: string, dto: UpdatePamRuleDto): Promise<PamRuleResponseDto> {
    const current = await this.writable(principal, id);
    const rule = mergeRuleWrite(toRuleWrite(current), dto as RuleInput);
    requireSiteWrite(principal, rule.siteId);
    await this.checkReferences(current.org_id, rule, current);
    const row = await this.write(() => this.rules.update(id, rule));
    await this.versions.bump(current.org_id);
    const changed = Object.keys(dto).filter((key) => (dto as Record<string, unknown>)[key] !== undefined);
    await this.audit.record({ action: 'pam_rule.update', orgId: current.org_id, resourceType: 'pam_rule', resourceId: id, details: { name: row.name, changed } });
    return { success: true, rule: toRuleDto(row) };
  }

  async delete(principal: Principal, id: string): Promise<PamSuccessDto> {
    const current = await this.writable(principal, id);
    await this.rules.delete(id);
    await this.versions.bump(current.org_id);
    await this.audit.record({ action: 'pam_rule.delete', orgId: current.org_id, resourceType: 'pam_rule', resourceId: id, details: { name: current.name } });
    return { success: true };
  }

  /** Not found when invisible (another tenant's); forbidden when outside the caller's sites. */
  private async writable(principal: Principal, id: string): Promise<PamRuleRow> {
    const row = await this.rules.find(id);
    if (!row) throw PamErrors.ruleNotFound();
    if (!canAccessSite(principal, row.site_id)) throw PamErrors.siteAccessDenied();
    return row;
  }

  private async checkReferences(orgId: string, rule: PamRuleWrite, current: PamRuleRow | null): Promise<void> {
    const shape = ruleShapeError(rule);
    if (shape) throw shape;
    if (rule.siteId && rule.siteId !== current?.site_id && !(await this.rules.siteBelongsToOrg(orgId, rule.siteId))) {
      throw PamErrors.siteOutsideOrg();
    }
    if (rule.matchSignerGroupId && rule.matchSignerGroupId !== current?.match_signer_group_id) {
      if (!(await this.signerGroups.findInOrg(orgId, rule.matchSignerGroupId))) throw PamErrors.signerGroupOutsideOrg();
    }
  }

  /** A site or signer group removed concurrently fails its composite foreign key. */
  private async write(fn: () => Promise<PamRuleRow>): Promise<PamRuleRow> {
    try {
      return await fn();
    } catch (error) {
      if (pgViolation(error) !== 'foreign_key') throw error;
      const constraint = String((error as { constraint?: unknown }).constraint ?? '');
      throw constraint.includes('site_id') ? PamErrors.siteOutsideOrg() : PamErrors.signerGroupOutsideOrg();
    }
  }
}
