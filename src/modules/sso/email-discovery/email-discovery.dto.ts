import { IsString, MaxLength } from 'class-validator';

export class SsoDiscoveryDto {
  /** The address typed on the login page; only its domain is used. */
  @IsString() @MaxLength(320) email: string;
}

export class DiscoveredSsoDto {
  providerName: string;
  /** Path of the login entry route, /api/v1/sso/login/<orgId>. */
  loginUrl: string;
  enforceSSO: true;
}

export class SsoDiscoveryResultDto {
  sso: DiscoveredSsoDto | null;
}
