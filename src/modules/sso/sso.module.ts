import { Module } from '@nestjs/common';
import { SsoLoginModule } from './login/sso-login.module';
import { SsoProvidersModule } from './providers/sso-providers.module';
import { SamlModule } from './saml/saml.module';

/**
 * The SSO feature, the one module the application imports: administration (providers, presets,
 * discovery, verified domains), OIDC sign-in with discovery by email, self-service linking and
 * sign-out, and the SAML service provider, all ending through one sign-in pipeline. It exports
 * services only (its sub-modules export no repository).
 */
@Module({
  imports: [SsoProvidersModule, SsoLoginModule, SamlModule],
  exports: [SsoProvidersModule, SsoLoginModule],
})
export class SsoModule {}
