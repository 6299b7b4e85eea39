import request from 'supertest';
import { Client } from 'pg';
import type { InterchangeDocument } from '../../src/modules/imports/document/interchange.types';
import { IMPORT_RESUME_QUEUE, IMPORT_RUN_QUEUE, IMPORT_STALE_SECONDS, ImportJob } from '../../src/modules/imports/import.job';
import { tenantFixture } from '../factories/tenant.factory';
import { ownerQuery, TestApp } from '../support/test-app';
import { InstanceProcess, startInstanceProcess } from './instance-process';
import { BOOT_TIMEOUT_MS, closeInstances, startInstances } from './scale-out.kit';

const CUSTOMERS = 4;
const DEVICES_PER_CUSTOMER = 3000;
const CONTACTS_PER_CUSTOMER = 1500;
/** The resume sweep's period on the surviving instances (JOBS_TEST_INTERVAL_SECONDS; 30 s in production). */
const SWEEP_SECONDS = 2;
/** The links an import keeps per kind of row it created. */
const LINKS = { customer: CUSTOMERS, device: CUSTOMERS * DEVICES_PER_CUSTOMER, custom_field: 1 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * An export big enough that its import runs for several seconds: the kill lands while a phase
 * is under way, after earlier phases have committed. Every row is named after `label`, so the
 * counts below find this import's rows only.
 */
function bigExport(label: string): InterchangeDocument {
  return {
    format: 'rmm-interchange',
    version: 1,
    source: { system: `takeover-${label}` },
    customFields: [{ externalId: 'cf-owner', key: 'asset_owner', name: 'Asset owner', type: 'text' }],
    customers: Array.from({ length: CUSTOMERS }, (_, c) => ({
      externalId: `cust-${c}`,
      name: `Takeover ${label} customer ${c}`,
      devices: Array.from({ length: DEVICES_PER_CUSTOMER }, (_, d) => ({ externalId: `dev-${c}-${d}`, hostname: `TK-${c}-WS-${d}`, osType: 'windows' })),
      contacts: Array.from({ length: CONTACTS_PER_CUSTOMER }, (_, k) => ({ externalId: `ct-${c}-${k}`, name: `Contact ${c} ${k}`, email: `contact${k}@c${c}.${label}.example` })),
      customFieldValues: Array.from({ length: DEVICES_PER_CUSTOMER }, (_, d) => ({ deviceExternalId: `dev-${c}-${d}`, field: 'asset_owner', value: `owner ${d}` })),
    })),
  };
}

interface JobState {
  status: string;
  phases: string[];
  phases_completed: number;
  current_phase: string | null;
  attempts: number;
  processed_items: number;
  total_items: number;
}

/**
 * Issue 14, part 4: an import job whose instance is killed mid-run is finished by another
 * instance. The first instance is a process of its own (instance.main.ts), the only one working
 * the import queue, so it runs the import; it is killed with SIGKILL while a phase is under way:
 * no COMMIT, no shutdown hook, no pg-boss stop. Two instances in this process run the resume
 * sweep; one of them takes the import over by its heartbeat and finishes it from the first phase
 * the dead instance had not committed. All three reach PostgreSQL through the file's PgBouncer.
 *
 * The surviving instances sweep the run's shared database (JOBS_TEST_QUEUES=imports_resume):
 * they could also resume another file's import whose heartbeat is two minutes old, which is
 * what the sweep is for and harmless to that file.
 */
describe('an import job whose instance dies mid-run', () => {
  let survivors: TestApp[] = [];
  let doomed: InstanceProcess | undefined;
  let ids: Record<string, string>;
  let auth: string;
  const label = `t${Date.now().toString(36)}`;

  beforeAll(async () => {
    survivors = await startInstances(2, { START_JOBS: 'true', JOBS_TEST_QUEUES: IMPORT_RESUME_QUEUE, JOBS_TEST_INTERVAL_SECONDS: String(SWEEP_SECONDS) });
    ids = await survivors[0].seed(tenantFixture());
    auth = `Bearer ${await survivors[0].token(ids.tech, { mfa: true })}`;
    doomed = await startInstanceProcess({ START_JOBS: 'true', JOBS_TEST_QUEUES: IMPORT_RUN_QUEUE });
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await doomed?.kill();
    await closeInstances(survivors);
  });

  it('is taken over by another instance through its heartbeat and ends completed, every row imported exactly once', async () => {
    const takenBy = survivors.map((s) => jest.spyOn(s.app.get(ImportJob), 'process'));
    const doc = bigExport(label);
    const posted = await request(doomed!.baseUrl)
      .post('/api/v1/imports')
      .set('Authorization', auth)
      .set('Content-Type', 'application/vnd.rmm-import+json')
      .send(JSON.stringify(doc));
    expect(posted.status).toBe(202);
    const id: string = posted.body.import.id;

    // Watch the job's row; kill the instance once two phases have committed and a third runs.
    const watcher = new Client({ connectionString: process.env.DATABASE_URL });
    await watcher.connect();
    let atKill: JobState;
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { rows } = await watcher.query<JobState>(`SELECT status, phases, phases_completed, current_phase, attempts, processed_items, total_items FROM imports WHERE id = $1`, [id]);
        const row = rows[0];
        if (row.status === 'running' && row.phases_completed >= 2) break;
        if (row.status === 'completed' || row.status === 'failed') throw new Error(`the import ended (${row.status}) before the kill: make the export bigger`);
        if (Date.now() > deadline) throw new Error(`the import did not get under way: ${JSON.stringify(row)}\n${doomed!.output().slice(-2000)}`);
        await sleep(20);
      }
      const exit = await doomed!.kill();
      expect(exit.signal).toBe('SIGKILL');
      [atKill] = (await watcher.query<JobState>(`SELECT status, phases, phases_completed, current_phase, attempts, processed_items, total_items FROM imports WHERE id = $1`, [id])).rows;
    } finally {
      await watcher.end();
    }
    // The kill landed mid-run: some phases committed, the one in flight not.
    expect(atKill).toMatchObject({ status: 'running', attempts: 1 });
    expect(atKill.phases_completed).toBeGreaterThanOrEqual(2);
    expect(atKill.phases_completed).toBeLessThan(atKill.phases.length);
    const [{ devices: devicesAtKill }] = await ownerQuery<{ devices: number }>(
      `SELECT count(*)::int AS devices FROM devices d JOIN organizations o ON o.id = d.org_id WHERE o.partner_id = $1 AND d.hostname LIKE 'TK-%'`,
      [ids.partner],
    );
    expect(devicesAtKill).toBe(atKill.phases_completed > 2 ? CUSTOMERS * DEVICES_PER_CUSTOMER : 0);

    // While the dead instance's heartbeat is fresh, no sweep takes the job: it could still be alive.
    await sleep(3 * SWEEP_SECONDS * 1000 + 500);
    const [waiting] = await ownerQuery<JobState>(`SELECT status, phases_completed, attempts FROM imports WHERE id = $1`, [id]);
    expect(waiting).toMatchObject({ status: 'running', phases_completed: atKill.phases_completed, attempts: 1 });

    // The heartbeat ages past IMPORT_STALE_SECONDS (moved back rather than waited for: two minutes).
    await ownerQuery(`UPDATE imports SET heartbeat_at = now() - make_interval(secs => $2) WHERE id = $1 AND status = 'running'`, [id, IMPORT_STALE_SECONDS + 1]);

    let done: { status: string; error: unknown; percent: number; report: { phases: { name: string; status: string }[]; summary: Record<string, number> } } | undefined;
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const res = await request(survivors[1].http).get(`/api/v1/imports/${id}`).set('Authorization', auth).expect(200);
      if (res.body.import.status === 'completed' || res.body.import.status === 'failed') {
        done = res.body.import;
        break;
      }
      await sleep(200);
    }
    expect(done).toMatchObject({ status: 'completed', error: null, percent: 100 });
    expect(done!.report.phases.map((p) => p.status)).toEqual(atKill.phases.map(() => 'completed'));

    // One of the surviving instances ran it, as a second attempt.
    expect(takenBy.some((spy) => spy.mock.calls.some(([arg]) => arg === id))).toBe(true);
    const [row] = await ownerQuery<JobState>(`SELECT status, phases_completed, attempts, processed_items, total_items FROM imports WHERE id = $1`, [id]);
    expect(row).toMatchObject({ status: 'completed', phases_completed: atKill.phases.length, attempts: 2 });
    expect(row.processed_items).toBe(row.total_items);

    // Every row exactly once: organizations, devices, contacts, values, and their links.
    const [stored] = await ownerQuery<Record<string, number>>(
      `WITH orgs AS (SELECT id FROM organizations WHERE partner_id = $1 AND name LIKE $2)
       SELECT (SELECT count(*)::int FROM orgs) AS organizations,
              (SELECT count(*)::int FROM devices WHERE org_id IN (SELECT id FROM orgs)) AS devices,
              (SELECT count(DISTINCT hostname)::int FROM devices WHERE org_id IN (SELECT id FROM orgs)) AS hostnames,
              (SELECT count(*)::int FROM contacts WHERE org_id IN (SELECT id FROM orgs)) AS contacts,
              (SELECT count(DISTINCT external_id)::int FROM contacts WHERE org_id IN (SELECT id FROM orgs)) AS contact_ids,
              (SELECT count(*)::int FROM custom_field_values WHERE org_id IN (SELECT id FROM orgs)) AS values,
              (SELECT count(DISTINCT (kind, namespace, external_id))::int FROM import_links WHERE partner_id = $1 AND source_system = $3) AS distinct_links`,
      [ids.partner, `Takeover ${label} customer %`, doc.source.system],
    );
    const devices = CUSTOMERS * DEVICES_PER_CUSTOMER;
    const contacts = CUSTOMERS * CONTACTS_PER_CUSTOMER;
    expect(stored).toMatchObject({ organizations: CUSTOMERS, devices, hostnames: devices, contacts, contact_ids: contacts, values: devices });
    // The links from source ids to the rows created (contacts keep their source id on the row).
    const links = await ownerQuery<{ kind: string; n: number }>(
      `SELECT kind, count(*)::int AS n FROM import_links WHERE partner_id = $1 AND source_system = $2 GROUP BY kind`,
      [ids.partner, doc.source.system],
    );
    expect(Object.fromEntries(links.map((l) => [l.kind, l.n]))).toEqual(LINKS);
    expect(stored.distinct_links).toBe(links.reduce((sum, l) => sum + l.n, 0));

    // Each phase was audited once (its audit row commits with it), and the import completed once.
    const audits = await ownerQuery<{ action: string; phase: string | null; n: number }>(
      `SELECT action, details->>'phase' AS phase, count(*)::int AS n FROM audit_logs WHERE resource_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [id],
    );
    expect(Object.fromEntries(audits.filter((a) => a.action === 'import.phase').map((a) => [a.phase, a.n]))).toEqual(Object.fromEntries(atKill.phases.map((p) => [p, 1])));
    expect(audits.filter((a) => a.action === 'import.complete').map((a) => a.n)).toEqual([1]);

    // The accepting instance ran the import itself, with no pg-boss job: the import's heartbeat is
    // what noticed the death.
    const runs = await ownerQuery<{ state: string }>(`SELECT state::text FROM pgboss.job WHERE name = $1 AND data->>'importId' = $2`, [IMPORT_RUN_QUEUE, id]);
    expect(runs).toEqual([]);
  }, 240_000);
});
