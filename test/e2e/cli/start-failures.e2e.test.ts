import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../src/infra/database/embedded-postgres';
import { ensureDatabase, migrate } from '../../../src/infra/database/migrate';
import { scratchDatabase } from '../shutdown/service-process';
import { alive, cleanEnv, run, runToExit, STACK_LINE } from './built-service';

const BOOT_MS = 240_000;

/** The block a failed start ends with: from its first line to the end of the output. */
function block(output: string): string {
  const at = output.lastIndexOf('Cannot start: ');
  return at < 0 ? '' : output.slice(at).trim();
}

/**
 * Issue 31 item 1: every way a start fails ends with one block, in the shape of the configuration
 * error: what failed, the setting or resource it came from (no password), and what to do; exit
 * status 1; no stack trace unless LOG_LEVEL=debug. Each case runs the service (src/main.ts) as a
 * child process with nothing of the test run's environment but the settings it names.
 */
describe('a start that fails', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'rmm-start-failure-'));
    // The embedded PostgreSQL runs as its own user (the tests may run as root), which must reach its directory.
    chmodSync(d, 0o755);
    dirs.push(d);
    return d;
  };
  const migrated = scratchDatabase();
  /** Every start on `migrated` seeds the demo tenant: they share its encryption key. */
  const secrets = { SECRET_ENCRYPTION_KEY: 'start-failures-encryption-key-0123456789', JWT_SECRET: 'start-failures-jwt-secret-0123456789abcdef' };

  beforeAll(async () => {
    await ensureDatabase(migrated.ownerUrl);
    // The run's request-role URL: a derived one would set the cluster-wide app_user's password anew.
    await migrate(migrated.ownerUrl, migrated.appUrl);
  }, BOOT_MS);
  afterAll(async () => {
    await migrated.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it(
    'names the process holding the embedded data directory when another start runs on it, and leaves that start serving',
    async () => {
      const dir = dataDir();
      const firstPort = await freePort();
      const first = run(cleanEnv({ DATA_DIR: dir, PORT: String(firstPort), START_JOBS: 'false' }));
      try {
        expect(await first.ready(firstPort)).toBe(true);
        const postmaster = Number(readFileSync(join(dir, 'postgres/pg/postmaster.pid'), 'utf8').split('\n')[0]);

        const second = await runToExit(cleanEnv({ DATA_DIR: dir, PORT: String(await freePort()), START_JOBS: 'false' }));
        expect(second.code).toBe(1);
        const text = block(second.output);
        expect(text).toMatch(/^Cannot start: the embedded PostgreSQL data directory is in use by another start/);
        expect(text).toContain(`  - data directory: ${join(dir, 'postgres/pg')} (DATA_DIR)`);
        expect(text).toContain(`  - held by: PostgreSQL process ${postmaster}, started by process ${first.child.pid} (`);
        expect(text).toContain(`kill ${first.child.pid}`);
        expect(text).toContain('DATA_DIR=<dir>');
        expect(second.output).not.toMatch(STACK_LINE);
        expect(second.output).not.toMatch(/^undefined$/m);
        // The first start still serves, on the same PostgreSQL.
        expect(await first.ready(firstPort, 5000)).toBe(true);
        expect(alive(postmaster)).toBe(true);
      } finally {
        first.child.kill('SIGTERM');
        await first.exited;
      }
    },
    BOOT_MS,
  );

  it(
    'says PostgreSQL is unreachable, from DATABASE_URL, without its password',
    async () => {
      const port = await freePort();
      const r = await runToExit(cleanEnv({ DATA_DIR: dataDir(), DATABASE_URL: `postgres://owner:s3cret-pw@127.0.0.1:${port}/rmm` }));
      expect(r.code).toBe(1);
      expect(block(r.output)).toBe(
        [
          `Cannot start: PostgreSQL at 127.0.0.1:${port} is unreachable`,
          `  - setting: DATABASE_URL (postgres://owner:***@127.0.0.1:${port}/rmm), the owner role (migrations)`,
          `  - cause: connect ECONNREFUSED 127.0.0.1:${port}`,
          `  - to do: start PostgreSQL there, or correct the host and port in DATABASE_URL; npm run doctor checks every connection and setting without starting the service`,
        ].join('\n'),
      );
      expect(r.output).not.toContain('s3cret-pw');
      expect(r.output).not.toMatch(STACK_LINE);
    },
    BOOT_MS,
  );

  it(
    'adds the stack trace to the same block when LOG_LEVEL=debug',
    async () => {
      const port = await freePort();
      const r = await runToExit(cleanEnv({ DATA_DIR: dataDir(), LOG_LEVEL: 'debug', DATABASE_URL: `postgres://owner@127.0.0.1:${port}/rmm` }));
      expect(r.code).toBe(1);
      expect(r.output).toContain(`Cannot start: PostgreSQL at 127.0.0.1:${port} is unreachable`);
      expect(r.output).toMatch(STACK_LINE);
    },
    BOOT_MS,
  );

  it(
    'says PostgreSQL refused the sign-in, and which setting holds the user name',
    async () => {
      const owner = new URL(migrated.ownerUrl);
      owner.username = 'no_such_role_31';
      const r = await runToExit(cleanEnv({ DATA_DIR: dataDir(), DATABASE_URL: owner.toString() }));
      expect(r.code).toBe(1);
      const text = block(r.output);
      expect(text).toMatch(/^Cannot start: PostgreSQL at [^ ]+ refused the sign-in\n/);
      // With a password in the URL (embedded PostgreSQL) it is masked, and PostgreSQL does not say whether the role exists.
      expect(text).toMatch(/ {2}- setting: DATABASE_URL \(postgres:\/\/no_such_role_31(:\*\*\*)?@/);
      expect(text).toMatch(/ {2}- cause: (role "no_such_role_31" does not exist|password authentication failed for user "no_such_role_31")/);
      if (owner.password) expect(r.output).not.toContain(decodeURIComponent(owner.password));
      expect(text).toContain('  - to do: check the user name and password in DATABASE_URL');
      expect(r.output).not.toMatch(STACK_LINE);
    },
    BOOT_MS,
  );

  it(
    'says the database named in DATABASE_APP_URL does not exist, and how to create it',
    async () => {
      const app = new URL(migrated.appUrl);
      app.pathname = '/rmm_no_such_database_31';
      const r = await runToExit(cleanEnv({ DATA_DIR: dataDir(), DATABASE_URL: migrated.ownerUrl, DATABASE_APP_URL: app.toString(), START_JOBS: 'false' }));
      expect(r.code).toBe(1);
      const text = block(r.output);
      expect(text).toMatch(/^Cannot start: the database named in DATABASE_APP_URL does not exist on /);
      expect(text).toContain('  - setting: DATABASE_APP_URL (postgres://app_user:***@');
      expect(text).toContain('/rmm_no_such_database_31), the request role');
      expect(text).toContain('  - to do: create it (CREATE DATABASE');
      expect(r.output).not.toMatch(STACK_LINE);
    },
    BOOT_MS,
  );

  it(
    'refuses a database migrated by a newer version, naming the migrations it does not know, and changes nothing',
    async () => {
      const db = scratchDatabase();
      try {
        await ensureDatabase(db.ownerUrl);
        await migrate(db.ownerUrl, db.appUrl);
        await db.query(`INSERT INTO migrations (timestamp, name) VALUES (1999999999999, 'FromANewerVersion1999999999999')`);
        const before = await db.query(`SELECT id, name FROM migrations ORDER BY id`);
        const r = await runToExit(cleanEnv({ DATA_DIR: dataDir(), DATABASE_URL: db.ownerUrl, DATABASE_APP_URL: db.appUrl, START_JOBS: 'false' }));
        expect(r.code).toBe(1);
        expect(block(r.output)).toBe(
          [
            'Cannot start: the database was migrated by a newer version of the service',
            '  - setting: DATABASE_URL (its migrations table)',
            '  - unknown migrations: FromANewerVersion1999999999999',
            '  - to do: start the version that applied them (or a later one); to go back to this version, restore the database from a backup taken before the upgrade',
          ].join('\n'),
        );
        expect(await db.query(`SELECT id, name FROM migrations ORDER BY id`)).toEqual(before);
        expect(await db.query(`SELECT 1 FROM users`)).toEqual([]);
      } finally {
        await db.drop();
      }
    },
    BOOT_MS,
  );

  it(
    'says which pending migrations failed and why, keeping none of them, when the database is not empty',
    async () => {
      const db = scratchDatabase();
      try {
        // Another application's table where this service's first migration creates its own.
        await ensureDatabase(db.ownerUrl);
        await db.query(`CREATE TABLE partners (id int)`);
        const r = await runToExit(cleanEnv({ DATA_DIR: dataDir(), DATABASE_URL: db.ownerUrl, DATABASE_APP_URL: db.appUrl, START_JOBS: 'false' }));
        expect(r.code).toBe(1);
        const text = block(r.output);
        expect(text).toMatch(/^Cannot start: applying \d+ pending migration\(s\) failed, and none of them was kept/);
        expect(text).toContain('  - migrations: Foundation1763700000000 … ');
        expect(text).toContain('  - cause: relation "partners" already exists');
        expect(text).toContain("needs a database of this service's own");
        expect(r.output).not.toMatch(STACK_LINE);
        // TypeORM creates its empty migrations table before the transaction; no migration is recorded, nothing of theirs exists.
        expect(await db.query(`SELECT count(*)::int AS n FROM migrations`)).toEqual([{ n: 0 }]);
        expect(await db.query(`SELECT to_regclass('organizations') AS o, to_regclass('users') AS u`)).toEqual([{ o: null, u: null }]);
      } finally {
        await db.drop();
      }
    },
    BOOT_MS,
  );

  it(
    'says the port is in use, naming PORT and how to find the process',
    async () => {
      const holder: Server = createServer();
      const port = await new Promise<number>((resolve) => holder.listen(0, () => resolve((holder.address() as { port: number }).port)));
      try {
        const r = await runToExit(cleanEnv({ DATA_DIR: dataDir(), PORT: String(port), DATABASE_URL: migrated.ownerUrl, DATABASE_APP_URL: migrated.appUrl, START_JOBS: 'false', ...secrets }));
        expect(r.code).toBe(1);
        const text = block(r.output);
        expect(text).toMatch(new RegExp(`^Cannot start: port ${port} is already in use\\n  - setting: PORT \\(${port}\\)\\n  - cause: listen EADDRINUSE`));
        expect(text).toContain(`  - to do: stop the process listening on port ${port} (ss -ltnp 'sport = :${port}' names it`);
        expect(text).toContain('PORT=<port>');
        expect(r.output).not.toMatch(STACK_LINE);
      } finally {
        holder.close();
      }
    },
    BOOT_MS,
  );

  it(
    'warns that Redis is unreachable, says the service continues and how, and starts',
    async () => {
      const port = await freePort();
      const redisPort = await freePort();
      const r = run(
        cleanEnv({ DATA_DIR: dataDir(), PORT: String(port), DATABASE_URL: migrated.ownerUrl, DATABASE_APP_URL: migrated.appUrl, START_JOBS: 'false', ...secrets, REDIS_URL: `redis://:r3dis-pw@127.0.0.1:${redisPort}` }),
      );
      try {
        expect(await r.ready(port)).toBe(true);
        const out = r.output();
        const warning = out.slice(out.indexOf('Redis is unreachable'));
        expect(warning).toMatch(
          new RegExp(
            `^Redis is unreachable: the service starts without it\\n  - setting: REDIS_URL \\(redis://:\\*\\*\\*@127\\.0\\.0\\.1:${redisPort}\\)\\n  - cause: connect ECONNREFUSED 127\\.0\\.0\\.1:${redisPort}\\n  - meanwhile: rate limits are counted on this instance only`,
          ),
        );
        expect(warning).toContain('  - to do: start Redis there or correct REDIS_URL');
        expect(out).not.toContain('r3dis-pw');
      } finally {
        r.child.kill('SIGTERM');
        const end = await r.exited;
        // The output rides along only when the stop failed, to say why.
        expect({ code: end.code, output: end.code === 0 ? '' : r.output().slice(-3000) }).toEqual({ code: 0, output: '' });
      }
    },
    BOOT_MS,
  );

  it(
    'refuses a production start without JWT_SECRET, naming it and how to make one',
    async () => {
      const r = await runToExit(
        cleanEnv({ NODE_ENV: 'production', DATA_DIR: dataDir(), DATABASE_URL: migrated.ownerUrl, DATABASE_APP_URL: migrated.appUrl, SECRET_ENCRYPTION_KEY: 'k'.repeat(40) }),
      );
      expect(r.code).toBe(1);
      expect(r.output.trim()).toBe(
        'Invalid configuration:\n  - JWT_SECRET is required in production: set it to 32 or more random characters, for example the output of: openssl rand -base64 48',
      );
    },
    BOOT_MS,
  );
});
