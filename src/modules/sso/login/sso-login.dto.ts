import { IsString, Length } from 'class-validator';
import { LoginBrandingDto } from '../../branding/branding.dto';
import type { ApiQueryOptions } from '@nestjs/swagger';
import { MAX_REDIRECT_PATH_LENGTH } from './redirect-path.util';

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
