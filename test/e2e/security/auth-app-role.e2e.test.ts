import { execFile, fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Pool } from 'pg';
import { prepareDatabase } from '../../../src/bootstrap';
import { ConfigError, loadConfig } from '../../../src/infra/config/app-config';
import { ensureDatabase, migrate } from '../../../src/infra/database/migrate';
import { TS_NODE_FLAGS } from '../../support/ts-node-child';

/** An embedded PostgreSQL that checks passwords, in a child process (see auth-app-role.pg.child.ts). */
async function startPasswordCheckingPostgres(dataDir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child: ChildProcess = fork(join(__dirname, 'auth-app-role.pg.child.ts'), [dataDir], {
    execArgv: TS_NODE_FLAGS,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((res, rej) => {
    child.once('message', (m: { url: string }) => res(m.url));
    child.once('exit', (code) => rej(new Error(`embedded PostgreSQL exited with ${code}`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((res) => {
        child.once('exit', () => res());
        child.send('stop');
      }),
  };
}

/**
 * Issue 13 item 5: the request role `app_user` got LOGIN with the literal password `app_user`
 * when the owner URL had none (and the owner's own password when it had one). The attack is a
 * plain connection to PostgreSQL with a guessed password, so these tests run against a server
 * that checks passwords: an embedded PostgreSQL of their own.
 */
describe('the request role cannot be reached with a predictable password', () => {
  let embedded: { url: string; stop(): Promise<void> } | undefined;
  let ownerUrl: string;
  let pgDir: string;
  let dataDir: string;
  let appUrl: string;
  const warnings: string[] = [];

  const connectAs = async (url: string) => {
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<{ who: string }>('SELECT current_user AS who')).rows[0].who;
    } finally {
      await c.end();
    }
  };
  const withPassword = (url: string, user: string, password: string) => {
    const u = new URL(url);
    u.username = user;
    u.password = encodeURIComponent(password);
    return u.toString();
  };
  const passwordOf = (url: string) => decodeURIComponent(new URL(url).password);

  beforeAll(async () => {
    pgDir = mkdtempSync(join(tmpdir(), 'rmm-role-pg-'));
    dataDir = mkdtempSync(join(tmpdir(), 'rmm-role-data-'));
    embedded = await startPasswordCheckingPostgres(pgDir);
    const u = new URL(embedded.url);
    u.pathname = '/rmm_role';
    ownerUrl = u.toString();
    await ensureDatabase(ownerUrl);
    // Generating the password warns on the console (asserted below rather than printed).
    const warn = jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(args.join(' ')));
    try {
      appUrl = await migrate(ownerUrl, undefined, dataDir);
    } finally {
      warn.mockRestore();
    }
  }, 120_000);
  afterAll(async () => {
    await embedded?.stop();
    for (const dir of [pgDir, dataDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('derives a random password that is not app_user, not empty and not the owner password', () => {
    const password = passwordOf(appUrl);
    expect(password).not.toBe('');
    expect(password).not.toBe('app_user');
    expect(password).not.toBe(passwordOf(ownerUrl));
    expect(password.length).toBeGreaterThanOrEqual(32);
  });

  it('warns once that it generated the request role password, naming the file it keeps it in', () => {
    expect(warnings).toEqual([
      `[config] DATABASE_APP_URL is not set (password of the request role app_user): generated a development value in ${join(dataDir, 'dev-secrets.json')}. Set it explicitly outside development.`,
    ]);
  });

  it('lets the derived URL in and refuses app_user with the old predictable passwords', async () => {
    expect(await connectAs(appUrl)).toBe('app_user');
    await expect(connectAs(withPassword(appUrl, 'app_user', 'app_user'))).rejects.toThrow(/password authentication failed/);
    await expect(connectAs(withPassword(appUrl, 'app_user', passwordOf(ownerUrl)))).rejects.toThrow(/password authentication failed/);
  });

  it('keeps the pools of a running instance working when another instance derives the URL again', async () => {
    const pool = new Pool({ connectionString: appUrl, max: 3 });
    try {
      await pool.query('SELECT 1');
      expect(await migrate(ownerUrl, undefined, dataDir)).toBe(appUrl);
      // three concurrent queries need new connections, which authenticate again
      const who = await Promise.all([1, 2, 3].map(() => pool.query<{ who: string }>('SELECT current_user AS who')));
      expect(who.map((r) => r.rows[0].who)).toEqual(['app_user', 'app_user', 'app_user']);
    } finally {
      await pool.end();
    }
  });

  it('gave the test run itself a request role password that is neither app_user, empty nor the owner password', () => {
    const password = passwordOf(process.env.DATABASE_APP_URL as string);
    expect(password).not.toBe('');
    expect(password).not.toBe('app_user');
    expect(password).not.toBe(passwordOf(process.env.DATABASE_URL as string));
  });

  it('agrees on one password when several processes generate it for the first time at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rmm-role-race-'));
    // every process loads the module first, then waits for the same instant before generating
    const at = Date.now() + 4000;
    const script = `const { developmentAppRolePassword } = require('./src/infra/config/app-config'); while (Date.now() < ${at}); process.stdout.write(developmentAppRolePassword(process.argv[1]))`;
    const derive = () =>
      new Promise<string>((res, rej) =>
        execFile(
          process.execPath,
          [...TS_NODE_FLAGS, '-e', script, dir],
          { cwd: join(__dirname, '../../..') },
          (err, stdout) => (err ? rej(err) : res(stdout)),
        ),
      );
    try {
      const passwords = await Promise.all([derive(), derive(), derive(), derive()]);
      expect(new Set(passwords).size).toBe(1);
      expect(JSON.parse(readFileSync(join(dir, 'dev-secrets.json'), 'utf8')).DATABASE_APP_PASSWORD).toBe(passwords[0]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('in production', () => {
    const production = (extra: Record<string, string> = {}) => ({
      NODE_ENV: 'production',
      DATABASE_URL: ownerUrl,
      SECRET_ENCRYPTION_KEY: 'prod-encryption-key-0123456789abcdef0123456789',
      JWT_SECRET: 'prod-jwt-secret-abcdef0123456789abcdef0123456789',
      ...extra,
    });

    it('refuses to start without DATABASE_APP_URL, before touching the database', async () => {
      const config = loadConfig(production());
      await expect(prepareDatabase({ ...config, databaseUrl: 'postgres://nobody@127.0.0.1:1/none' })).rejects.toThrow(/DATABASE_APP_URL is required in production/);
    });

    it.each([
      ['no password', (u: URL) => ((u.password = ''), u)],
      ['the default password app_user', (u: URL) => ((u.password = 'app_user'), u)],
      ['the role name as password', (u: URL) => ((u.username = 'rmm_app'), (u.password = 'rmm_app'), u)],
      ['the owner password', (u: URL) => ((u.password = encodeURIComponent(passwordOf(ownerUrl))), u)],
    ])('refuses a DATABASE_APP_URL with %s', (_label, shape) => {
      const url = shape(new URL(appUrl)).toString();
      expect(() => loadConfig(production({ DATABASE_APP_URL: url }))).toThrow(ConfigError);
      expect(() => loadConfig(production({ DATABASE_APP_URL: url }))).toThrow(/DATABASE_APP_URL/);
    });

    it('accepts a DATABASE_APP_URL with a password of its own', () => {
      expect(loadConfig(production({ DATABASE_APP_URL: appUrl })).databaseAppUrl).toBe(appUrl);
    });
  });
});
