import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../src/infra/database/embedded-postgres';
import { ensureDatabase, migrate } from '../../../src/infra/database/migrate';
import { scratchDatabase } from '../shutdown/service-process';
import { cleanEnv, runToExit, source } from './built-service';

const RUN_MS = 120_000;

interface Report {
  ok: boolean;
  checks: { check: string; result: string; detail: string; todo: string }[];
}

/**
 * Issue 31 item 2: `npm run doctor` checks a deployment before it serves and changes nothing. It
 * runs as the command does (src/cli/doctor.ts, a child process on a clean environment).
 */
describe('npm run doctor', () => {
  const ready = scratchDatabase();
  const pending = scratchDatabase();
  const dirs: string[] = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'rmm-doctor-'));
    chmodSync(d, 0o755);
    dirs.push(d);
    return d;
  };
  const doctor = (env: Record<string, string>, ...args: string[]) => runToExit(cleanEnv(env), RUN_MS, source('src/cli/doctor.ts', ...args));

  beforeAll(async () => {
    await Promise.all([ensureDatabase(ready.ownerUrl), ensureDatabase(pending.ownerUrl)]);
    // The run's request-role URL: a derived one would set the cluster-wide app_user's password anew.
    await migrate(ready.ownerUrl, ready.appUrl);
  }, RUN_MS);
  afterAll(async () => {
    await Promise.all([ready.drop(), pending.drop()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it(
    'passes on a migrated database with a restricted request role, printing a table of every check, and exits 0',
    async () => {
      const r = await doctor({ DATA_DIR: dataDir(), PORT: String(await freePort()), DATABASE_URL: ready.ownerUrl, DATABASE_APP_URL: ready.appUrl });
      expect(r.output).toMatch(/^CHECK +RESULT +DETAIL \/ WHAT TO DO\n/);
      for (const [check, result] of [
        ['configuration', 'PASS'],
        ['PORT', 'PASS'],
        ['PostgreSQL \\(owner\\)', 'PASS'],
        ['migrations', 'PASS'],
        ['SAML SP certificates', 'PASS'],
        ['request role', 'PASS'],
        ['connection pooler', 'PASS'],
        ['Redis', 'SKIP'],
      ]) {
        expect(r.output).toMatch(new RegExp(`\\n${check} +${result} `));
      }
      expect(r.output).toContain('app_user: no superuser, no BYPASSRLS');
      expect(r.output.trim().split('\n').pop()).toBe('Every check passed.');
      expect(r.code).toBe(0);
    },
    RUN_MS,
  );

  it(
    'fails when the request role bypasses row-level security or Redis does not answer, says what to do, and exits 1',
    async () => {
      const redisPort = await freePort();
      const r = await doctor({
        DATA_DIR: dataDir(),
        DATABASE_URL: ready.ownerUrl,
        // The owner is a superuser: as the request role it would see every tenant's rows.
        DATABASE_APP_URL: ready.ownerUrl,
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      });
      expect(r.output).toMatch(/\nrequest role +FAIL +\S+ is a superuser: every tenant's rows would be visible\n +→ point DATABASE_APP_URL at a login role created NOSUPERUSER NOBYPASSRLS/);
      expect(r.output).toMatch(new RegExp(`\\nRedis +FAIL +redis://127\\.0\\.0\\.1:${redisPort}: connect ECONNREFUSED`));
      expect(r.output.trim().split('\n').pop()).toBe('2 check(s) failed.');
      expect(r.code).toBe(1);
    },
    RUN_MS,
  );

  it(
    'prints one JSON object with --json: ok, and each check with its result, detail and what to do',
    async () => {
      const r = await doctor({ DATA_DIR: dataDir(), DATABASE_URL: pending.ownerUrl, DATABASE_APP_URL: pending.appUrl }, '--json');
      const report = JSON.parse(r.output) as Report;
      expect(report.ok).toBe(false);
      for (const c of report.checks) {
        expect(Object.keys(c).sort()).toEqual(['check', 'detail', 'result', 'todo']);
        expect(['pass', 'warn', 'fail', 'skip']).toContain(c.result);
      }
      expect(report.checks.find((c) => c.check === 'migrations')).toEqual({
        check: 'migrations',
        result: 'fail',
        detail: expect.stringMatching(/^\d+ of \d+ not applied yet \(first: Foundation1763700000000\)$/),
        todo: 'npm run migration:run (a start applies them too, as the owner role)',
      });
      expect(r.code).toBe(1);
    },
    RUN_MS,
  );

  it(
    'changes nothing: no migration applied, no database created, no role altered, no secret written',
    async () => {
      const missing = new URL(ready.ownerUrl);
      missing.pathname = `${missing.pathname}_never_created`;
      const dir = dataDir();
      // The role itself, and its settings everywhere or in the databases doctor is pointed at: other files of the run
      // create and drop databases of their own, each with the role's settings in it, meanwhile.
      const names = [ready.ownerUrl, pending.ownerUrl, missing.toString()].map((u) => new URL(u).pathname.slice(1));
      const roles = `SELECT r.rolname, r.rolpassword, r.rolcanlogin, s.setdatabase, s.setconfig
                       FROM pg_authid r
                       LEFT JOIN pg_db_role_setting s ON s.setrole = r.oid
                        AND (s.setdatabase = 0 OR s.setdatabase IN (SELECT oid FROM pg_database WHERE datname = ANY ('{${names.join(',')}}'::text[])))
                      WHERE r.rolname = 'app_user' ORDER BY 1, 4, 5`;
      // Other runs on the server create and drop databases of their own: only the one named is looked for.
      const created = () => ready.query(`SELECT datname FROM pg_database WHERE datname = $1`, [missing.pathname.slice(1)]);
      const before = { roles: await ready.query(roles), pending: await pending.query(`SELECT to_regclass('migrations') AS t`) };

      // Development without DATABASE_APP_URL, where a start would generate secrets and the request role's password.
      await doctor({ DATA_DIR: dir, DATABASE_URL: pending.ownerUrl });
      await doctor({ DATA_DIR: dir, DATABASE_URL: missing.toString() }, '--json');

      expect(readdirSync(dir)).toEqual([]);
      expect(await ready.query(roles)).toEqual(before.roles);
      expect(await created()).toEqual([]);
      expect(await pending.query(`SELECT to_regclass('migrations') AS t`)).toEqual(before.pending);
    },
    RUN_MS,
  );

  it(
    'names a missing database as a failed check with what to do',
    async () => {
      const missing = new URL(ready.ownerUrl);
      missing.pathname = `${missing.pathname}_never_created`;
      const r = await doctor({ DATA_DIR: dataDir(), DATABASE_URL: missing.toString() }, '--json');
      const report = JSON.parse(r.output) as Report;
      expect(report.checks.find((c) => c.check === 'PostgreSQL (owner)')).toMatchObject({
        result: 'fail',
        detail: expect.stringMatching(/^the database named in DATABASE_URL does not exist on /),
        todo: expect.stringContaining('create it (CREATE DATABASE'),
      });
      expect(r.code).toBe(1);
    },
    RUN_MS,
  );
});
