import { IsOptional, IsString, IsUUID, Length } from 'class-validator';
import type { DateTime, Uuid } from '../../../common/openapi/formats';

export class ClaimSsoDomainDto {
  /** A domain name; scheme, port, trailing dot and a leading `*.` are dropped, IDN becomes punycode. */
  @IsString() @Length(1, 300) domain: string;
  /** Required for partner-scope callers; inferred for organization-scope callers. */
  @IsOptional() @IsUUID() orgId?: string;
}

export class ListSsoDomainsQueryDto {
  @IsOptional() @IsUUID() orgId?: string;
}

export class SsoDomainDto {
  id: Uuid;
  orgId: Uuid;
  domain: string;
  verified: boolean;
  verifiedAt: DateTime | null;
  lastCheckedAt: DateTime | null;
  /** Publish a TXT record with this name … */
  recordName: string;
  /** … holding this value. */
  recordValue: string;
  createdAt: DateTime;
}

export class SsoDomainResponseDto {
  success: true;
  domain: SsoDomainDto;
}

export class SsoDomainListDto {
  success: true;
  domains: SsoDomainDto[];
}
