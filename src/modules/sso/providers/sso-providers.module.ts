import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JobsModule } from '../../../infra/jobs/jobs.module';
import { AuthModule } from '../../auth/auth.module';
import { IdpNetworkService } from '../discovery/idp-network.service';
import { ProviderDiscoveryService } from '../discovery/provider-discovery.service';
import { DomainRecheckJob } from '../domains/domain-recheck.job';
import { SsoDomainController } from '../domains/sso-domain.controller';
import { SsoDomainEntity } from '../domains/sso-domain.entity';
import { SsoDomainRepository } from '../domains/sso-domain.repository';
import { SsoDomainService } from '../domains/sso-domain.service';
import { SsoCheckController } from './sso-check.controller';
import { SsoCheckService } from './sso-check.service';
import { SsoProviderLookupService } from './sso-provider-lookup.service';
import { SsoProviderController } from './sso-provider.controller';
import { SsoProviderEntity } from './sso-provider.entity';
import { SsoProviderRepository } from './sso-provider.repository';
import { SsoConnectionTestService } from './sso-connection-test.service';
import { SsoProviderConfigBuilderService } from './sso-provider-config-builder.service';
import { SsoProviderReadService } from './sso-provider-read.service';
import { SsoProviderWriteService } from './sso-provider-write.service';
import { IdpMetadataImporterService } from '../saml/metadata/idp-metadata-importer.service';

/**
 * SSO administration: providers, presets, discovery, verified domains and the public check.
 * Exports what the sign-in flows build on: provider lookup, discovery (with the safe HTTP
 * client) and the verified-domain lookup. Part of the SsoModule facade.
 */
@Module({
  // PrincipalResolverService: a provider's change ends the sessions it minted, at once on this instance.
  imports: [AuthModule, JobsModule, TypeOrmModule.forFeature([SsoProviderEntity, SsoDomainEntity])],
  controllers: [SsoProviderController, SsoCheckController, SsoDomainController],
  providers: [
    IdpNetworkService,
    ProviderDiscoveryService,
    SsoProviderRepository,
    SsoProviderReadService,
    SsoProviderWriteService,
    SsoProviderConfigBuilderService,
    SsoConnectionTestService,
    SsoProviderLookupService,
    SsoCheckService,
    SsoDomainRepository,
    SsoDomainService,
    DomainRecheckJob,
    IdpMetadataImporterService,
  ],
  exports: [IdpNetworkService, ProviderDiscoveryService, SsoProviderLookupService, SsoDomainService, SsoCheckService],
})
export class SsoProvidersModule {}
