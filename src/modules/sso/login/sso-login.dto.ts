import { IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { LoginBrandingDto } from '../../branding/branding.dto';
import type { ApiQueryOptions } from '@nestjs/swagger';
import { MAX_REDIRECT_PATH_LENGTH } from './redirect-path.util';
import { MAX_LOGOUT_TOKEN_LENGTH } from './sso-idp-logout.service';

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

/** The query parameter a login start reads to return the browser afterwards. */
export const REDIRECT_QUERY: ApiQueryOptions = {
  name: 'redirect',
  required: false,
  description: `A path on this origin (up to ${MAX_REDIRECT_PATH_LENGTH} characters) to return to after signing in; anything else is ignored and the browser returns to \`/\`.`,
  schema: { type: 'string' },
};

export class SsoLogoutDto {
  /** A path on this origin to return to once signed out at the identity provider too; anything else, or nothing, is `/login`. */
  @IsOptional() @IsString() @MaxLength(MAX_REDIRECT_PATH_LENGTH) redirect?: string;
}

export class SsoLogoutStartedDto {
  success: boolean;
  /** Where the browser goes next: the identity provider's sign-out (OIDC end-session, SAML Single Logout), or a path on this origin. */
  logoutUrl: string;
}

/** OpenID Connect Back-Channel Logout 1.0 §2.5: the identity provider's form-encoded POST. */
export class BackchannelLogoutFormDto {
  /** The logout token: a JWT signed by the identity provider. */
  @IsString() @Length(1, MAX_LOGOUT_TOKEN_LENGTH) logout_token: string;
}

export class BackchannelLogoutResultDto {
  success: boolean;
}
