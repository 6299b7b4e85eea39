import { Module } from '@nestjs/common';
import { JobsService } from './jobs.service';

/**
 * One pg-boss per instance (JobsService). Every module that registers background work imports
 * this module; Nest keeps a single instance of it, so they all share one JobsService.
 */
@Module({
  providers: [JobsService],
  exports: [JobsService],
})
export class JobsModule {}
