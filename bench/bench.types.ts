import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Fixture, FixtureIds } from '../src/seed/fixture.types';
import { SERVICE_NODE_FLAGS } from '../src/infra/config/node-flags';

export interface BenchContext {
  /** Base URL of the service instance under test (a separate process). */
  baseUrl: string;
  /**
   * The environment that instance was started with (database, secrets, NODE_ENV=production),
   * for a scenario that needs a sibling instance configured differently, e.g. one allowed to
   * reach an IdP on loopback, which production refuses.
   */
  serviceEnv: Record<string, string>;
  /** In-process application on the same database, for seeding and direct service calls. */
  app: NestExpressApplication;
  seed(f: Fixture): Promise<FixtureIds>;
  token(userId: string, opts?: { mfa?: boolean }): Promise<string>;
  ownerQuery<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  durationSeconds: number;
}

/** A load test: autocannon requests against the service, compared with the bare insert baseline. */
export interface HttpLoad {
  kind: 'http';
  connections: number;
  requests: { method: 'GET' | 'POST' | 'PUT' | 'PATCH'; path: string; headers?: Record<string, string>; body?: string }[];
  /** Which baseline row to show the ratio against (default: the bare insert baseline). */
  compareWith?: string;
  /** Seconds of this load, when it is one of many short ones (default: BENCH_DURATION). */
  durationSeconds?: number;
}

/** A measurement that is not an HTTP load (engine evaluation, a preview query, an import). */
export interface CustomResult {
  kind: 'custom';
  rows: { scenario: string; value: number; unit: string; target?: string; baseline?: { value: number; label: string } }[];
}

export interface Scenario {
  name: string;
  /** Lower runs first. */
  order?: number;
  prepare(ctx: BenchContext): Promise<HttpLoad | CustomResult>;
}

/**
 * Node flags for the processes a run forks (service instances, baseline): the service's own
 * (SERVICE_NODE_FLAGS, what `npm start` and the image run it with), given to the baseline too so
 * that a ratio compares code, not runtime settings; and with BENCH_CPU_PROFILE=<dir>, each writes
 * a V8 CPU profile there when it exits, for chrome://inspect or `npx speedscope`.
 */
export function nodeArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROFILE;
  return [...SERVICE_NODE_FLAGS, ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [])];
}
