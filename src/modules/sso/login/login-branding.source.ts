import type { LoginBrandingDto } from '../../branding/branding.dto';

/**
 * Where the login page's branding comes from (spec 1.9). The login context asks it only under
 * the rule of spec 1.6.2 (self-hosted, exactly one partner); the module binds it to the
 * branding module's partner login branding.
 */
export abstract class LoginBrandingSource {
  abstract forPartner(partnerId: string): Promise<LoginBrandingDto | null>;
}
