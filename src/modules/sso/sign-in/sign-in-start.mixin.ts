import { Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { ProviderOwner } from '../login/sso-login.repository';
import { LoginStart, type StartProtocol } from './login-start.decorator';
import { redirectToIdp, type StartedSignIn } from './sign-in-response.util';

/** A protocol's start of a login round trip; it refuses an owner whose provider uses another protocol. */
export interface SignInStarter {
  start(owner: ProviderOwner, redirect: unknown): Promise<StartedSignIn>;
}

/**
 * The two public start routes of a sign-in protocol, below the prefix of the controller that
 * extends the class this returns: `login/partner/:partnerId` and `login/:orgId`. SsoLoginController
 * (OIDC) and SamlController (SAML) inherit them (Nest and the OpenAPI document read inherited
 * routes), so the routes, their limits and their redirect are declared once; each protocol hands
 * in its starter, which sets its own state cookie, and the protocol the descriptions name.
 *
 * A mixin, not a `.controller.ts` file: the swagger plugin would look each class of such a file up
 * among the module's exports, and the class made here is not one.
 */
export function SignInStartRoutes(protocol: StartProtocol) {
  class StartRoutes {
    constructor(private readonly starter: SignInStarter) {}

    // Declared before login/:orgId, so `partner` is never read as an organization id.
    @LoginStart('partner', protocol)
    async startPartner(@UuidParam('partnerId') partnerId: string, @Query('redirect') redirect: unknown, @Res() res: Response): Promise<void> {
      redirectToIdp(res, await this.starter.start({ partnerId }, redirect));
    }

    @LoginStart('organization', protocol)
    async startOrganization(@UuidParam('orgId') orgId: string, @Query('redirect') redirect: unknown, @Res() res: Response): Promise<void> {
      redirectToIdp(res, await this.starter.start({ orgId }, redirect));
    }
  }
  return StartRoutes;
}
