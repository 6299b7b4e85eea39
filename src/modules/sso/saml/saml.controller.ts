import { Body, Controller, Get, Header, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../../common/decorators/auth.decorator';
import { NoRequestTransaction } from '../../../common/decorators/no-request-transaction.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import { STATE_COOKIE } from '../login/state-cookie.util';
import { AcsForm, SamlAcsService } from './saml-acs.service';
import { SamlLogoutService } from './saml-logout.service';
import { clearedSamlStateCookieOptions } from './saml-cookie.util';
import { SamlLoginService } from './saml-login.service';
import { ApiRedirect } from '../../../common/decorators/api-errors.decorator';
import type { StartProtocol } from '../sign-in/login-start.decorator';
import { redirectSignedIn } from '../sign-in/sign-in-response.util';
import { SignInStartRoutes } from '../sign-in/sign-in-start.mixin';
import { SamlAcsFormDto } from './saml.dto';

/** The SAML start routes (`saml/login/partner/:partnerId`, `saml/login/:orgId`): only for a SAML provider. */
const SAML_START: StartProtocol = { name: 'SAML', request: 'an AuthnRequest (HTTP-Redirect binding)', other: 'OIDC' };

@ApiTags('sso')
// These routes open their own system-context transactions (refusals commit audit rows).
@NoRequestTransaction()
@Controller('sso/saml')
export class SamlController extends SignInStartRoutes(SAML_START) {
  constructor(
    private readonly login: SamlLoginService,
    private readonly acs: SamlAcsService,
    private readonly logout: SamlLogoutService,
  ) {
    super(login);
  }

  /**
   * The service-provider metadata (XML) of a SAML provider, for the identity provider's administrator.
   *
   * @remarks Public; served whatever the provider's status, so the identity provider can be configured before the
   * provider goes live. Cacheable for 5 minutes. 404 for an unknown id or an OIDC provider.
   */
  @Get('metadata/:providerId')
  @Public()
  @Header('Content-Type', 'application/samlmetadata+xml; charset=utf-8')
  @Header('Cache-Control', 'public, max-age=300')
  @ApiProduces('application/samlmetadata+xml')
  @ApiOkResponse({ description: 'The SAML 2.0 EntityDescriptor of this service provider.', schema: { type: 'string' } })
  metadata(@UuidParam('providerId') providerId: string): Promise<string> {
    return this.login.metadata(providerId);
  }

  /**
   * The assertion consumer service: receives the identity provider's SAML response; always redirects (302).
   *
   * @remarks Public, for the identity provider's auto-submitted form (HTTP-POST binding, `SAMLResponse` and
   * `RelayState`). On success the browser goes back to the page it started from with a one-time exchange code in
   * the fragment (`#ssoCode=…`), to trade at `POST /sso/exchange`; on failure to `/login?error=<code>` (codes in
   * docs/sso-login.md).
   */
  @Post('acs')
  @Public()
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
  @ApiBody({ type: SamlAcsFormDto })
  @ApiRedirect('back to the page the sign-in started from (`#ssoCode=…`), or to `/login?error=<code>`')
  async consume(@Body() form: AcsForm, @Req() req: Request, @Res() res: Response): Promise<void> {
    redirectSignedIn(res, await this.acs.handle(form ?? {}, req.cookies?.[STATE_COOKIE]), clearedSamlStateCookieOptions(this.login.secureCookies));
  }

  /**
   * The Single Logout service (HTTP-Redirect binding); always redirects (302).
   *
   * @remarks Public, for the identity provider's redirects. A signed `SAMLRequest` (IdP-initiated logout) ends
   * the sessions of its NameID (and SessionIndex) at this provider and sends the browser back to the IdP with
   * our signed LogoutResponse; a signed `SAMLResponse` answering our LogoutRequest sends the browser to the
   * return path in `RelayState`. Anything unsigned, malformed or from another issuer goes to
   * `/login?error=sso_error` and is audited.
   */
  @Get('slo/:providerId')
  @Public()
  @Header('Cache-Control', 'no-store')
  @ApiRedirect("to the identity provider with our LogoutResponse, to the return path, or to `/login?error=sso_error`")
  @ApiQuery({ name: 'SAMLRequest', required: false, description: "The IdP's deflated, base64 LogoutRequest.", schema: { type: 'string' } })
  @ApiQuery({ name: 'SAMLResponse', required: false, description: "The IdP's deflated, base64 LogoutResponse.", schema: { type: 'string' } })
  @ApiQuery({ name: 'RelayState', required: false, description: 'Carried through the logout round trip.', schema: { type: 'string' } })
  @ApiQuery({ name: 'SigAlg', required: false, description: 'The query signature algorithm (RSA-SHA256 or RSA-SHA512).', schema: { type: 'string' } })
  @ApiQuery({ name: 'Signature', required: false, description: 'The query signature (required).', schema: { type: 'string' } })
  async singleLogout(@UuidParam('providerId') providerId: string, @Query() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    const rawQuery = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
    res.redirect(302, await this.logout.handle(providerId, query, rawQuery));
  }
}
