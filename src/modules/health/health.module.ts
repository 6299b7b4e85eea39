import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DrainState } from './drain-state';
import { HealthController } from './health.controller';

/** Global so that anything waiting on shutdown (after-response tasks) can read the drain deadline. */
@Global()
@Module({ imports: [TerminusModule.forRoot({ logger: false })], controllers: [HealthController], providers: [DrainState], exports: [DrainState] })
export class HealthModule {}
