import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../src/infra/database/embedded-postgres';
import { alive, cleanEnv, ensureBuilt, run, ROOT, type Run } from '../cli/built-service';

const BOOT_MS = 300_000;

/** Every process whose parent is `pid`, from /proc. */
function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
type Signal = (typeof SIGNALS)[number];

/** One `npm start` per signal, each with a data directory, a port and an embedded PostgreSQL of its own. */
const starts: Partial<Record<Signal, { dataDir: string; npm: Run }>> = {};

/**
 * The two starts share nothing, so they boot at the same time, before the first test; each waits,
 * idle, for its own signal. Every start settles before a failure is thrown, so afterAll stops both.
 */
beforeAll(async () => {
  ensureBuilt();
  const booted = await Promise.allSettled(
    SIGNALS.map(async (signal) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'rmm-npm-start-'));
      // The embedded PostgreSQL runs as its own user (the tests may run as root), which must reach its directory.
      chmodSync(dataDir, 0o755);
      const port = await freePort();
      const npm = run(cleanEnv({ DATA_DIR: dataDir, PORT: String(port), START_JOBS: 'false' }), ['npm', ['start', '--silent', '--ignore-scripts']]);
      starts[signal] = { dataDir, npm };
      expect(await npm.ready(port, BOOT_MS)).toBe(true);
    }),
  );
  const failed = booted.find((b): b is PromiseRejectedResult => b.status === 'rejected');
  if (failed) throw failed.reason;
}, BOOT_MS);
afterAll(() => {
  for (const { dataDir, npm } of Object.values(starts)) {
    if (npm.child.exitCode === null && npm.child.signalCode === null) npm.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * Issue 31 item 3: a supervisor signals the process it started, `npm start` itself. The service
 * (npm's child) and its embedded PostgreSQL (the service's child) stop, and nothing is left behind.
 * `npm start` runs on a clean environment, with the process tree a user's has (npm, then the start
 * script's node); its prestart build is left to ensureBuilt, which the files needing dist take in
 * turn (--ignore-scripts skips only the pre and post scripts).
 */
describe.each(SIGNALS)('%s sent to npm start', (signal) => {
  it(
    'stops the service and its embedded PostgreSQL, and npm exits after them',
    async () => {
      const { dataDir, npm } = starts[signal]!;
      const service = children(npm.child.pid!);
      expect(service).toHaveLength(1);
      const pidFile = join(dataDir, 'postgres/pg/postmaster.pid');
      const postgres = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
      expect(children(service[0])).toContain(postgres);

      npm.child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const end = await Promise.race([npm.exited, new Promise<null>((r) => (timer = setTimeout(() => r(null), 60_000)))]);
      clearTimeout(timer);
      expect(end).not.toBeNull();
      expect(alive(service[0])).toBe(false);
      expect(alive(postgres)).toBe(false);
      // PostgreSQL removes its pid file only on a clean shutdown.
      expect(existsSync(pidFile)).toBe(false);
      expect(npm.output()).toMatch(new RegExp(`${signal}: draining`));
      expect(npm.output()).toMatch(/Stopped in \d+ ms/);
    },
    BOOT_MS,
  );
});

/** The same command, as the image runs it without npm. */
describe('node dist/src/cli/doctor.js', () => {
  it(
    'runs from the build and prints the table',
    async () => {
      ensureBuilt();
      const dir = mkdtempSync(join(tmpdir(), 'rmm-doctor-dist-'));
      try {
        const r = run(cleanEnv({ DATA_DIR: dir, DATABASE_URL: `postgres://nobody@127.0.0.1:${await freePort()}/rmm` }), [process.execPath, [join(ROOT, 'dist/src/cli/doctor.js')]]);
        const { code } = await r.exited;
        expect(r.output()).toMatch(/^CHECK +RESULT +DETAIL \/ WHAT TO DO\n/);
        expect(r.output()).toMatch(/\nPostgreSQL \(owner\) +FAIL +PostgreSQL at 127\.0\.0\.1:\d+ is unreachable/);
        expect(code).toBe(1);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    BOOT_MS,
  );
});
