import { Injectable } from '@nestjs/common';
import type { LoginBrandingDto } from './sso-login.dto';

/**
 * Where the login page's branding comes from (spec 1.9). The login context asks it only under
 * the rule of spec 1.6.2 (self-hosted, exactly one partner). The branding module replaces the
 * default below by providing its own LoginBrandingSource.
 */
export abstract class LoginBrandingSource {
  abstract forPartner(partnerId: string): Promise<LoginBrandingDto | null>;
}

@Injectable()
export class NoLoginBranding extends LoginBrandingSource {
  async forPartner(): Promise<LoginBrandingDto | null> {
    return null;
  }
}
