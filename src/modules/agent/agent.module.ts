import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { DbService } from '../../infra/database/db.service';
import { PamModule } from '../pam/pam.module';
import { PoliciesModule } from '../policies/policies.module';
import { AgentSettingsService } from './agent-settings.service';
import { AgentController } from './agent.controller';
import { ElevationIngestRepository } from './elevation-ingest.repository';
import { ElevationIngestService } from './elevation-ingest.service';
import { DeviceRateLimiter } from './rate-limit/device-rate-limiter';
import { PostgresRateLimiterService } from './rate-limit/postgres-rate-limiter.service';
import { RedisRateLimiterService } from './rate-limit/redis-rate-limiter.service';

/** What agents call: elevation-prompt ingest and their PAM settings. */
@Module({
  imports: [PamModule, PoliciesModule],
  controllers: [AgentController],
  providers: [
    ElevationIngestService,
    ElevationIngestRepository,
    AgentSettingsService,
    {
      provide: DeviceRateLimiter,
      inject: [APP_CONFIG, DbService],
      useFactory: (config: AppConfig, db: DbService): DeviceRateLimiter => (config.redisUrl ? new RedisRateLimiterService(config.redisUrl, new PostgresRateLimiterService(db)) : new PostgresRateLimiterService(db)),
    },
  ],
})
export class AgentModule {}
