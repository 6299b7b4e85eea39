import { Injectable, Logger } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception';
import { Principal, scopeOf } from '../../../common/principal';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditEntry, AuditService } from '../../audit/audit.service';
import { refuse, RefusalService } from '../../audit/refusal.service';
import { IdpNetworkService } from '../discovery/idp-network.service';
import { normaliseDomain } from '../../../infra/net/domain.util';
import { SsoErrors } from '../sso.errors';
import type { ClaimSsoDomainDto, ListSsoDomainsQueryDto, SsoDomainDto, SsoDomainListDto, SsoDomainResponseDto } from './sso-domain.dto';
import type { SsoSuccessDto } from '../sso.dto';
import type { SsoDomainEntity } from './sso-domain.entity';
import { SsoDomainRepository } from './sso-domain.repository';

export interface RecheckReport {
  checked: number;
  /** Domains un-verified by this run, as `domain` names. */
  unverified: string[];
  /** Domains whose DNS could not answer: left as they were. */
  errors: number;
}

/**
 * DNS proof that an organization controls an email domain (spec 1.2.2 and 1.5.3). Lookups
 * run outside any transaction; each result is written in a short transaction after it.
 */
@Injectable()
export class SsoDomainService {
  private readonly logger = new Logger(SsoDomainService.name);

  constructor(
    private readonly repo: SsoDomainRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly network: IdpNetworkService,
    private readonly refusals: RefusalService,
  ) {}

  /**
   * Runs in the request transaction. Several organizations may claim one domain; discovery
   * by email treats a domain verified by more than one as a collision (spec 1.5.4).
   */
  async claim(principal: Principal, dto: ClaimSsoDomainDto): Promise<SsoDomainResponseDto> {
    const domain = normaliseDomain(dto.domain);
    if (!domain) throw AppException.validation([{ field: 'domain', message: 'domain must be a domain name such as example.com' }]);
    const orgId = dto.orgId ?? (principal.scope === 'organization' ? principal.orgId : null);
    if (!orgId) throw SsoErrors.orgIdRequired();
    if (!(await this.repo.organizationVisible(orgId))) throw SsoErrors.organizationNotFound();
    const row = await this.repo.insert({ orgId, domain, token: this.network.domainVerifier.newToken(), createdBy: principal.userId });
    if (!row) throw SsoErrors.domainAlreadyClaimed();
    await this.audit.record({ action: 'sso.domain.create', orgId, resourceType: 'sso_domain', resourceId: row.id, details: { domain } });
    return { success: true, domain: this.toDto(row) };
  }

  /** Runs in the request transaction; without orgId, every domain the caller can see. */
  async list(query: ListSsoDomainsQueryDto): Promise<SsoDomainListDto> {
    if (query.orgId && !(await this.repo.organizationVisible(query.orgId))) throw SsoErrors.organizationNotFound();
    return { success: true, domains: (await this.repo.list(query.orgId ?? null)).map((row) => this.toDto(row)) };
  }

  async remove(id: string): Promise<SsoSuccessDto> {
    const row = await this.repo.delete(id);
    if (!row) throw SsoErrors.domainNotFound();
    await this.audit.record({ action: 'sso.domain.delete', orgId: row.orgId, resourceType: 'sso_domain', resourceId: id, details: { domain: row.domain } });
    return { success: true };
  }

  /**
   * Looks the TXT record up now. A failed check never un-verifies a domain (that is the
   * re-check's job, after its grace period); it is reported as 400 and recorded.
   */
  async verify(principal: Principal, id: string): Promise<SsoDomainResponseDto> {
    const scope = scopeOf(principal);
    const current = await this.tx.run(scope, () => this.repo.find(id));
    if (!current) throw SsoErrors.domainNotFound();

    const result = await this.network.domainVerifier.check(current.domain, current.token);

    return this.refusals.run(scope, async () => {
      const row = result === 'verified' ? await this.repo.markSeen(id) : await this.repo.markChecked(id);
      if (!row) throw SsoErrors.domainNotFound();
      const dto = this.toDto(row);
      if (result !== 'verified') {
        const reason = result === 'missing' ? 'record_missing' : 'dns_unavailable';
        const failed: AuditEntry = { action: 'sso.domain.verify_failed', orgId: row.orgId, resourceType: 'sso_domain', resourceId: id, details: { domain: row.domain, reason } };
        // The check time stays recorded with the refusal.
        refuse(SsoErrors.domainVerificationFailed(reason, dto.recordName, dto.recordValue), { keepWork: true, audit: failed });
      }
      await this.audit.record({ action: 'sso.domain.verify', orgId: row.orgId, resourceType: 'sso_domain', resourceId: id, details: { domain: row.domain } });
      return { success: true as const, domain: dto };
    });
  }

  /**
   * Re-checks every verified domain. A record seen now refreshes `last_seen_at`; a record
   * missing for longer than `graceHours` un-verifies the domain (audit `sso.domain.unverified`);
   * a DNS failure changes nothing, so an outage of the organization's DNS does not revoke it.
   * Safe to run on several instances at once.
   */
  async recheckAll(graceHours: number): Promise<RecheckReport> {
    const rows = await this.tx.withSystemContext('domain re-verification reads every verified domain', () => this.repo.listVerified());
    const report: RecheckReport = { checked: 0, unverified: [], errors: 0 };
    for (const row of rows) {
      const result = await this.network.domainVerifier.check(row.domain, row.token);
      report.checked += 1;
      await this.tx.withSystemContext('domain re-verification records a check result', async () => {
        if (result === 'verified') {
          await this.repo.markSeen(row.id);
          return;
        }
        if (result === 'error') report.errors += 1;
        const gone = result === 'missing' ? await this.repo.unverifyIfStale(row.id, graceHours) : null;
        if (!gone) {
          await this.repo.markChecked(row.id);
          return;
        }
        report.unverified.push(gone.domain);
        await this.audit.record({
          action: 'sso.domain.unverified',
          orgId: gone.orgId,
          resourceType: 'sso_domain',
          resourceId: gone.id,
          details: { domain: gone.domain, lastSeenAt: row.lastSeenAt?.toISOString() ?? null, graceHours },
          actor: { type: 'system', id: null },
        });
      });
    }
    if (report.unverified.length > 0) this.logger.log({ unverified: report.unverified }, 'Un-verified domains whose TXT record is gone');
    return report;
  }

  /** Organizations that have verified `domain` (normalised): discovery by email answers only for exactly one. */
  verifiedOrgIds(domain: string): Promise<string[]> {
    return this.tx.withSystemContext('discovery by email looks up who verified a domain', () => this.repo.verifiedOrgIds(domain));
  }

  private toDto(row: SsoDomainEntity): SsoDomainDto {
    const verifier = this.network.domainVerifier;
    return {
      id: row.id,
      orgId: row.orgId,
      domain: row.domain,
      verified: row.verified,
      verifiedAt: row.verifiedAt?.toISOString() ?? null,
      lastCheckedAt: row.lastCheckedAt?.toISOString() ?? null,
      recordName: verifier.recordName(row.domain),
      recordValue: verifier.recordValue(row.token),
      createdAt: row.createdAt.toISOString(),
    };
  }
}
