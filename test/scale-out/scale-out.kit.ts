/**
 * The scale-out tier: several instances of the service, each with its own connection pool, whose
 * request role reaches PostgreSQL through the test file's PgBouncer (transaction pooling, three
 * server connections; test/support/pgbouncer.environment.ts). Any request may go to any
 * instance, and any transaction to any server connection.
 */
import type { PooledRun } from '../support/pgbouncer.environment';
import type { PgBouncer } from '../support/pgbouncer';
import { startTestApp, TestApp } from '../support/test-app';

/** How long a file's beforeAll may take to boot three instances (and an IdP) on a busy machine. */
export const BOOT_TIMEOUT_MS = 180_000;

/** The file's PgBouncer (the tier's environment started it; the setup file skips the tests without one). */
export function pgbouncer(): PgBouncer {
  const run = (globalThis as { __PGBOUNCER__?: PooledRun }).__PGBOUNCER__;
  if (!run?.ok) throw new Error('the scale-out tier runs with test/support/pgbouncer.environment.ts and PgBouncer installed');
  return run.bouncer;
}

/** `count` instances listening on their own ports, all through the pooler. */
export async function startInstances(count: number, env: Record<string, string> = {}): Promise<TestApp[]> {
  const url = process.env.DATABASE_APP_URL as string;
  if (url !== pgbouncer().appUrl) throw new Error(`the instances would not go through PgBouncer (DATABASE_APP_URL is ${new URL(url).host})`);
  const instances: TestApp[] = [];
  // One at a time: booting three Nest applications at once only contends for two cores.
  for (let i = 0; i < count; i++) instances.push(await startTestApp(env, { listen: true }));
  return instances;
}

export async function closeInstances(instances: TestApp[]): Promise<void> {
  await Promise.all(instances.map((t) => t.close()));
}

/** The connections PgBouncer holds for the run's database: the instances' clients, and its server connections. */
export async function poolerConnections(bouncer: PgBouncer): Promise<{ clients: number; servers: number }> {
  const database = new URL(bouncer.appUrl).pathname.slice(1);
  const user = decodeURIComponent(new URL(bouncer.appUrl).username);
  const mine = (rows: { database: string; user: string }[]) => rows.filter((r) => r.database === database && r.user === user).length;
  const [clients, servers] = await Promise.all([bouncer.show<{ database: string; user: string }>('CLIENTS'), bouncer.show<{ database: string; user: string }>('SERVERS')]);
  return { clients: mine(clients), servers: mine(servers) };
}
