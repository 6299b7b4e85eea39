import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JobsModule } from '../../../infra/jobs/jobs.module';
import { SsoLoginModule } from '../login/sso-login.module';
import { SamlAcsService } from './saml-acs.service';
import { SamlLoginService } from './saml-login.service';
import { SamlRequestCacheService } from './saml-request-cache.service';
import { SamlSpService } from './saml-sp.service';
import { SamlController } from './saml.controller';
import { SamlLogoutService } from './saml-logout.service';
import { SamlSpKeysService } from './saml-sp-keys.service';
import { SamlSpKeyEntity } from './saml-sp-key.entity';
import { SamlSpKeysRepository } from './saml-sp-keys.repository';
import { SamlSpSettingsEntity } from './saml-sp-settings.entity';
import { SamlSpSettingsController } from './saml-sp-settings.controller';
import { SamlSpSettingsService } from './saml-sp-settings.service';
import { SamlRepository } from './saml.repository';
import { SsoStateCleanupJob } from './sso-state-cleanup.job';

/**
 * SAML 2.0 service provider (spec 1.10, docs/sso-saml.md): SP metadata, SP-initiated login
 * over HTTP-Redirect and the HTTP-POST assertion consumer. Sign-ins end through the OIDC
 * module's login sessions, account resolution, exchange codes and audit.
 */
@Module({
  imports: [SsoLoginModule, JobsModule, TypeOrmModule.forFeature([SamlSpKeyEntity, SamlSpSettingsEntity])],
  controllers: [SamlController, SamlSpSettingsController],
  providers: [
    SamlRepository,
    SamlRequestCacheService,
    SamlSpService,
    SamlLoginService,
    SamlAcsService,
    SsoStateCleanupJob,
    SamlSpKeysRepository,
    SamlSpKeysService,
    SamlLogoutService,
    SamlSpSettingsService,
  ],
})
export class SamlModule {}
