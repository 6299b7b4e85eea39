import { Injectable } from '@nestjs/common';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import type { Principal } from '../../common/principal';
import { AuditService } from '../audit/audit.service';
import { mapViolations } from '../../common/errors/pg-error.util';
import { BrandingErrors } from './branding.errors';
import { BrandingRepository, BrandingValues } from './branding.repository';
import type { PartnerLoginBrandingEntity } from './partner-login-branding.entity';
import type { LoginBrandingDto, LoginBrandingResponseDto, ReplaceLoginBrandingDto } from './branding.dto';

const EMPTY: LoginBrandingDto = Object.freeze({ logoUrl: null, accentColor: null, headline: null });

function toDto(r: PartnerLoginBrandingEntity | null): LoginBrandingDto {
  return r ? { logoUrl: r.logoUrl, accentColor: r.accentColor, headline: r.headline } : { ...EMPTY };
}

function normalise(dto: ReplaceLoginBrandingDto): BrandingValues {
  return {
    logoUrl: dto.logoUrl ?? null,
    accentColor: dto.accentColor ? dto.accentColor.toLowerCase() : null,
    headline: dto.headline ? dto.headline : null,
  };
}

@Injectable()
export class BrandingService {
  constructor(
    private readonly repo: BrandingRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
  ) {}

  async get(principal: Principal): Promise<LoginBrandingResponseDto> {
    const partnerId = this.partnerOf(principal);
    return { success: true, branding: toDto(await this.repo.find(partnerId)) };
  }

  /** PUT semantics: what is omitted is cleared. */
  async replace(principal: Principal, dto: ReplaceLoginBrandingDto): Promise<LoginBrandingResponseDto> {
    const partnerId = this.partnerOf(principal);
    const next = normalise(dto);
    const before = toDto(await this.repo.find(partnerId));
    const row = await mapViolations(() => this.repo.replace(partnerId, next), { check: BrandingErrors.rejectedByDatabase });
    const changed = (Object.keys(next) as (keyof BrandingValues)[]).filter((k) => before[k] !== next[k]);
    // The logo itself can be a 256 KiB data URI: the audit row says what kind it is, not what it holds.
    const logo = next.logoUrl === null ? null : next.logoUrl.startsWith('data:') ? 'data_uri' : 'https_url';
    await this.audit.record({
      action: 'branding.update',
      partnerId,
      resourceType: 'partner_login_branding',
      resourceId: partnerId,
      details: { changed, logo, accentColor: next.accentColor, headline: next.headline },
    });
    return { success: true, branding: toDto(row) };
  }

  /**
   * The branding the login page shows for this partner, or null when it has nothing to show.
   * The login context (sso/login) asks only under the rule of spec 1.6.2 and 1.9.2: self-hosted,
   * exactly one partner. The login page is public, so the read is a named cross-tenant access.
   */
  loginBrandingFor(partnerId: string): Promise<LoginBrandingDto | null> {
    return this.tx.withSystemContext('the public login page shows the partner login branding', async () => {
      const row = await this.repo.find(partnerId);
      if (!row || (row.logoUrl === null && row.accentColor === null && row.headline === null)) return null;
      return toDto(row);
    });
  }

  private partnerOf(principal: Principal): string {
    if (principal.scope !== 'partner' || !principal.partnerId) throw BrandingErrors.partnerRequired();
    return principal.partnerId;
  }
}
