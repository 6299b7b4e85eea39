import { UserAccountsModule } from '../../tenancy/users/user-accounts.module';
import { Module } from '@nestjs/common';
import { AuthModule } from '../../auth/auth.module';
import { BrandingModule } from '../../branding/branding.module';
import { BrandingService } from '../../branding/branding.service';
import { ScimModule } from '../../scim/scim.module';
import { IdpNetworkService } from '../discovery/idp-network.service';
import { EmailDiscoveryController } from '../email-discovery/email-discovery.controller';
import { EmailDiscoveryRepository } from '../email-discovery/email-discovery.repository';
import { EmailDiscoveryService } from '../email-discovery/email-discovery.service';
import { IdentityLinkerService } from '../linking/identity-linker.service';
import { SsoLinkController } from '../linking/sso-link.controller';
import { SsoLinkService } from '../linking/sso-link.service';
import { SsoProvidersModule } from '../providers/sso-providers.module';
import { AccountResolverService } from './account-resolver.service';
import { IdentityWriterService } from './identity-writer.service';
import { LoginBrandingSource } from './login-branding.source';
import { LoginContextController } from './login-context.controller';
import { LoginContextService } from './login-context.service';
import { OIDC_HTTP, OidcRelyingPartyService } from './oidc-relying-party.service';
import { OidcLoginStarterService } from './oidc-login-starter.service';
import { OidcProviderMetadataService } from './oidc-provider-metadata.service';
import { SsoCallbackService } from './sso-callback.service';
import { SsoExchangeService } from './sso-exchange.service';
import { SsoLoginController } from './sso-login.controller';
import { SsoLoginRepository } from './sso-login.repository';
import { SsoLoginService } from './sso-login.service';
import { SsoLogoutController } from './sso-logout.controller';
import { SsoSignOutRepository } from './sso-sign-out.repository';
import { OidcEndSessionService } from './oidc-end-session.service';
import { SsoIdpLogoutService } from './sso-idp-logout.service';
import { SsoLogoutService } from './sso-logout.service';
import { SsoSessionLinkService } from './sso-session-link.service';
import { SignInPipelineService } from '../sign-in/sign-in-pipeline.service';
import { LoginSessionService } from '../sign-in/login-session.service';

/**
 * OIDC sign-in (spec 1.1–1.8): login start and callback, the exchange, discovery by email,
 * the login page context (with the branding module's login branding) and self-service linking.
 * Outbound IdP traffic goes through the SSO module's safe HTTP client.
 */
@Module({
  imports: [AuthModule, UserAccountsModule, SsoProvidersModule, BrandingModule, ScimModule],
  controllers: [SsoLoginController, SsoLogoutController, LoginContextController, EmailDiscoveryController, SsoLinkController],
  providers: [
    { provide: OIDC_HTTP, useFactory: (network: IdpNetworkService) => network.http, inject: [IdpNetworkService] },
    {
      provide: LoginBrandingSource,
      useFactory: (branding: BrandingService): LoginBrandingSource => ({ forPartner: (partnerId) => branding.loginBrandingFor(partnerId) }),
      inject: [BrandingService],
    },
    OidcRelyingPartyService,
    SsoLoginRepository,
    OidcLoginStarterService,
    OidcProviderMetadataService,
    SsoLoginService,
    SsoCallbackService,
    AccountResolverService,
    IdentityWriterService,
    SignInPipelineService,
    LoginSessionService,
    SsoExchangeService,
    LoginContextService,
    EmailDiscoveryRepository,
    EmailDiscoveryService,
    SsoLinkService,
    IdentityLinkerService,
    SsoSignOutRepository,
    SsoSessionLinkService,
    OidcEndSessionService,
    SsoLogoutService,
    SsoIdpLogoutService,
  ],
  // The SAML service provider ends its sign-ins through the same pipeline, records them for sign-out and
  // ends the sessions its IdP names through the same services.
  exports: [SignInPipelineService, LoginSessionService, SsoSessionLinkService, SsoLogoutService, SsoIdpLogoutService],
})
export class SsoLoginModule {}
