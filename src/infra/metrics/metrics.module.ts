import { Global, Module } from '@nestjs/common';
import { JobsModule } from '../jobs/jobs.module';
import { MetricsService } from './metrics.service';

/**
 * Prometheus metrics (docs/operations.md, "Metrics"). Global, so the modules that own a count
 * (ingest, sign-in, SCIM, the push outbox) inject MetricsService without importing this module;
 * the route itself is plain Express, mounted by configureApp (metrics-endpoint.ts).
 */
@Global()
@Module({ imports: [JobsModule], providers: [MetricsService], exports: [MetricsService] })
export class MetricsModule {}
