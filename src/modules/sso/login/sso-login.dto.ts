import { IsString, Length } from 'class-validator';
import { LoginBrandingDto } from '../../branding/branding.dto';

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

export class LoginContextDto {
  branding: LoginBrandingDto | null;
  partnerSso: PartnerSsoButtonDto | null;
}
