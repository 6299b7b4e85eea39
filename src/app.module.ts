import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { ClsModule } from 'nestjs-cls';
import { LoggerModule } from 'nestjs-pino';
import type { Request } from 'express';
import { AppConfig } from './infra/config/app-config';
import { ConfigModule } from './infra/config/config.module';
import { CryptoModule } from './infra/crypto/crypto.module';
import { DatabaseModule } from './infra/database/database.module';
import { loggerModuleParams } from './infra/logging/logging';
import { RedisThrottlerStorage } from './common/guards/redis-throttler-storage.service';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter';
import { AuthGuard } from './common/guards/auth.guard';
import { AppThrottlerGuard } from './common/guards/app-throttler.guard';
import { TenantContextInterceptor } from './common/interceptors/tenant-context.interceptor';
import { AuthModule } from './modules/auth/auth.module';
import { AuditModule } from './modules/audit/audit.module';
import { HealthModule } from './modules/health/health.module';
import { TenancyModule } from './modules/tenancy/tenancy.module';
import { BrandingModule } from './modules/branding/branding.module';
import { SsoModule } from './modules/sso/sso.module';
import { SeedModule } from './infra/database/seed/seed.module';
import { ContentModule } from './modules/content/content.module';
import { PamModule } from './modules/pam/pam.module';
import { PoliciesModule } from './modules/policies/policies.module';
import { ImportsModule } from './modules/imports/imports.module';
import { SsoLoginModule } from './modules/sso/login/sso-login.module';
import { SamlModule } from './modules/sso/saml/saml.module';
import { AgentModule } from './modules/agent/agent.module';
import { PamRequestsModule } from './modules/pam/requests/pam-requests.module';
import { PamApprovalsModule } from './modules/pam/approvals/pam-approvals.module';
import { PamActuationModule } from './modules/pam/actuation/pam-actuation.module';
import { AgentCommandsModule } from './modules/agent-commands/agent-commands.module';
import { PamFlowsModule } from './modules/pam/flows/pam-flows.module';
import { ScimModule } from './modules/scim/scim.module';

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
        ClsModule.forRoot({
          global: true,
          middleware: {
            mount: true,
            setup: (cls, req: Request & { id?: string }) => {
              cls.set('requestId', req.id);
              cls.set('ip', req.ip);
            },
          },
        }),
        ThrottlerModule.forRoot({
          throttlers: [{ name: 'default', ttl: 60_000, limit: 1_000_000 }],
          storage: config.redisUrl ? new RedisThrottlerStorage(config.redisUrl) : undefined,
        }),
        AuditModule,
        AuthModule,
        HealthModule,
        TenancyModule,
        BrandingModule,
        SsoModule,
        SeedModule,
        ContentModule,
        PoliciesModule,
        ImportsModule,
        SsoLoginModule,
        SamlModule,
        AgentModule,
        PamRequestsModule,
        PamApprovalsModule,
        PamActuationModule,
        AgentCommandsModule,
        PamModule,
        PamFlowsModule,
        ScimModule,
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
