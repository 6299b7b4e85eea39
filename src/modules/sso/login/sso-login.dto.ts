import { IsString, Length } from 'class-validator';

export class SsoExchangeDto {
  /** The one-time code from the `#ssoCode=` fragment of the post-login redirect. */
  @IsString() @Length(1, 128) code: string;
}

export class PartnerSsoButtonDto {
  providerName: string;
  /** Path of the partner login entry route, /api/v1/sso/login/partner/<partnerId>. */
  loginUrl: string;
  enforceSSO: boolean;
}

export class LoginBrandingDto {
  logoUrl: string | null;
  accentColor: string | null;
  headline: string | null;
}

export class LoginContextDto {
  branding: LoginBrandingDto | null;
  partnerSso: PartnerSsoButtonDto | null;
}
