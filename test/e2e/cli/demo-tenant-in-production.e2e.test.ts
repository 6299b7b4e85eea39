import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../src/infra/database/embedded-postgres';
import type { Fixture } from '../../../src/seed/fixture.types';
import { scratchDatabase, send, startService } from '../shutdown/service-process';
import { TS_NODE_FLAGS } from '../../support/ts-node-child';

const ROOT = join(__dirname, '../../..');
const BOOT_MS = 180_000;

interface Start {
  /** Whether /health/ready answered 200 (the start was then ended with SIGTERM). */
  ready: boolean;
  code: number | null;
  output: string;
}

/**
 * Runs src/main.ts as an operator would, with NODE_ENV=production, until it either exits on its own
 * or answers readiness (then SIGTERM); the test run's loopback-IdP switch is left out, production refuses it.
 */
async function productionStart(db: { ownerUrl: string; appUrl: string }): Promise<Start> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'rmm-demo-prod-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    START_JOBS: 'false',
    PORT: String(port),
    DATABASE_URL: db.ownerUrl,
    DATABASE_APP_URL: db.appUrl,
    DATA_DIR: dataDir,
  };
  delete env.SSO_ALLOW_INSECURE_LOOPBACK_IDP;
  const child = spawn(process.execPath, [...TS_NODE_FLAGS, join(ROOT, 'src/main.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const started = Date.now();
    let ready = false;
    while (child.exitCode === null && child.signalCode === null && !ready) {
      if (Date.now() - started > BOOT_MS) throw new Error(`the production start neither exited nor became ready:\n${output.slice(-4000)}`);
      ready = (await send({ port, method: 'GET', path: '/api/v1/health/ready' }).then((r) => r.status, () => 0)) === 200;
      if (!ready) await new Promise((r) => setTimeout(r, 250));
    }
    if (ready) child.kill('SIGTERM');
    return { ready, code: await exited, output };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Every start without NODE_ENV=production loads the demo tenant, whose sign-ins and agent tokens are
 * published (README, demo.json). A production start on such a database refuses, after migrations and
 * before listening, naming what it found; on a database without them it starts.
 */
describe('a production start on a database that holds the demo tenant', () => {
  const demo = JSON.parse(readFileSync(join(ROOT, 'src/seed/demo.json'), 'utf8')) as Fixture;
  const emails = demo.users!.map((u) => u.email);
  const agents = demo.devices!.filter((d) => d.agentId && d.agentToken);
  const withDemo = scratchDatabase();
  const fresh = scratchDatabase();

  beforeAll(async () => {
    // A development start, as on a laptop or a staging box that later becomes production.
    const dev = await startService(withDemo, { START_JOBS: 'false' });
    dev.child.kill('SIGTERM');
    await dev.exited;
  }, BOOT_MS);
  afterAll(() => Promise.all([withDemo.drop(), fresh.drop()]));

  it(
    'refuses with one error block naming the demo accounts and agents and what to do, exits non-zero, prints no stack trace and never listens',
    async () => {
      const held = await withDemo.query<{ email: string }>(`SELECT email FROM users WHERE lower(email) = ANY($1) ORDER BY email`, [emails]);
      expect(held.map((u) => u.email)).toEqual([...emails].sort());

      const start = await productionStart(withDemo);
      expect(start.ready).toBe(false);
      expect(start.code).not.toBe(0);
      expect(start.code).not.toBeNull();
      const refusal = start.output.slice(start.output.indexOf('Refusing to start'));
      expect(refusal).toMatch(/^Refusing to start: this database holds the demo tenant/);
      for (const email of emails) expect(refusal).toContain(`  - user ${email}`);
      for (const d of agents) expect(refusal).toContain(`  - agent ${d.agentId} (device ${d.hostname})`);
      expect(refusal).toContain('fresh database');
      expect(refusal).toContain('npm run bootstrap:admin');
      expect(refusal).toContain('docs/operations.md');
      expect(start.output).not.toMatch(/\n\s+at /);
      expect(start.output).not.toContain('Service:');
      // Nothing of the demo was loaded again or changed: the refusal reads only.
      expect(await withDemo.query(`SELECT 1 FROM users WHERE lower(email) = ANY($1)`, [emails])).toHaveLength(emails.length);
    },
    BOOT_MS,
  );

  it(
    'starts on a fresh database (migrated by the start itself) and loads no demo tenant there',
    async () => {
      const start = await productionStart(fresh);
      expect(start.output).not.toContain('Refusing to start');
      expect(start).toMatchObject({ ready: true, code: 0 });
      expect(await fresh.query(`SELECT 1 FROM users WHERE lower(email) = ANY($1)`, [emails])).toEqual([]);
    },
    BOOT_MS,
  );

  it(
    'starts on the same database once the demo accounts and agents are removed as docs/operations.md shows',
    async () => {
      // The statements of docs/operations.md, "Demo data and production", word for word.
      await withDemo.query(`
        BEGIN;
        SET LOCAL app.scope = 'system';
        DELETE FROM agents WHERE id IN ('6f1c2a4e-8d0b-4c1e-9a53-3b7f0d2c9e11', '3ec77364-5cd3-4ff3-8657-2a049fbe63cb')
           OR token_hash IN (encode(sha256('demo-agent-token-change-me'), 'hex'), encode(sha256('demo-branch-agent-token-change-me'), 'hex'));
        DELETE FROM users WHERE lower(email) IN ('admin@demo-msp.example', 'owner@contoso-dental.example');
        COMMIT;
      `);
      expect(await withDemo.query(`SELECT 1 FROM agents WHERE id = ANY($1)`, [agents.map((d) => d.agentId)])).toEqual([]);
      expect(await withDemo.query(`SELECT 1 FROM users WHERE lower(email) = ANY($1)`, [emails])).toEqual([]);
      const start = await productionStart(withDemo);
      expect(start.output).not.toContain('Refusing to start');
      expect(start).toMatchObject({ ready: true, code: 0 });
    },
    BOOT_MS,
  );
});
