import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from './infra/config/app-config';
import { ConfigModule } from './infra/config/config.module';
import { CryptoModule } from './infra/crypto/crypto.module';
import { DatabaseModule } from './infra/database/database.module';
import { RequestContextModule } from './infra/context/request-context';
import { loggerModuleParams } from './infra/logging/logging';
import { MetricsModule } from './infra/metrics/metrics.module';
import { RedisThrottlerStorageService } from './common/guards/redis-throttler-storage.service';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter';
import { AuthGuard } from './common/guards/auth.guard';
import { AppThrottlerGuard, THROTTLERS } from './common/guards/app-throttler.guard';
import { TenantContextInterceptor } from './common/interceptors/tenant-context.interceptor';
import { AuthModule } from './modules/auth/auth.module';
import { PrincipalCacheModule } from './modules/auth/principal-cache.module';
import { AuditModule } from './modules/audit/audit.module';
import { HealthModule } from './modules/health/health.module';
import { TenancyModule } from './modules/tenancy/tenancy.module';
import { BrandingModule } from './modules/branding/branding.module';
import { SsoModule } from './modules/sso/sso.module';
import { SeedModule } from './seed/seed.module';
import { ContentModule } from './modules/content/content.module';
import { PamModule } from './modules/pam/pam.module';
import { PoliciesModule } from './modules/policies/policies.module';
import { ImportsModule } from './modules/imports/imports.module';
import { AgentModule } from './modules/agent/agent.module';
import { AgentCommandsModule } from './modules/agent/commands/agent-commands.module';
import { ScimModule } from './modules/scim/scim.module';
import { ScimLookupModule } from './modules/scim/scim-lookup.module';
import { WebhooksModule } from './modules/webhooks/webhooks.module';

export interface AppModuleOptions {
  config: AppConfig;
  /** Connection string of the request role (NOSUPERUSER NOBYPASSRLS). */
  databaseAppUrl: string;
}

@Module({})
export class AppModule {
  static forRoot({ config, databaseAppUrl }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(loggerModuleParams(config)),
        CryptoModule,
        DatabaseModule.forRoot(databaseAppUrl, config),
        RequestContextModule,
        MetricsModule,
        ThrottlerModule.forRoot({
          throttlers: THROTTLERS,
          storage: config.redisUrl ? new RedisThrottlerStorageService(config.redisUrl) : undefined,
        }),
        // Express walks its routes in registration order, module by module: the routes a fleet and a
        // console call most register first (the agent's sat behind 150 others, a path match each per call).
        HealthModule,
        AgentModule,
        AgentCommandsModule,
        PamModule,
        TenancyModule,
        AuditModule,
        AuthModule,
        PrincipalCacheModule,
        BrandingModule,
        SsoModule,
        SeedModule,
        ContentModule,
        PoliciesModule,
        ImportsModule,
        ScimModule,
        ScimLookupModule,
        WebhooksModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_GUARD, useClass: AppThrottlerGuard },
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_INTERCEPTOR, useClass: TenantContextInterceptor },
      ],
    };
  }
}
