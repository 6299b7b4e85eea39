import { AgentKit, prompt, sha256 } from '../e2e/agent/agent-kit';
import { ownerQuery, TestApp } from '../support/test-app';
import { BOOT_TIMEOUT_MS, closeInstances, pgbouncer, poolerConnections, startInstances } from './scale-out.kit';

const SETUP = { target_executable_path: 'C:\\Program Files\\Contoso\\setup.exe', target_executable_hash: sha256('setup.exe'), target_executable_signer: 'Contoso Ltd' };

describe('agent ingest on three instances through PgBouncer (transaction pooling, three server connections)', () => {
  let instances: TestApp[];
  /** One kit per instance, over one seeded tenant. */
  let kits: AgentKit[];
  const on = (i: number) => kits[i % kits.length];

  beforeAll(async () => {
    instances = await startInstances(3);
    const first = await new AgentKit(instances[0]).seed();
    kits = instances.map((t, i) => (i === 0 ? first : Object.assign(new AgentKit(t), { fx: first.fx, ids: first.ids, admin: first.admin })));
  }, BOOT_TIMEOUT_MS);
  afterAll(() => closeInstances(instances));

  /** Puts `tokens` in the device's bucket and stops its refill for a minute, so counts do not depend on timing. */
  async function freeze(key: string, tokens: number, org = 'orgA'): Promise<void> {
    await ownerQuery(
      `INSERT INTO agent_rate_buckets (org_id, device_id, tokens, refilled_at) VALUES ($1, $2, $3, clock_timestamp() + interval '1 minute')
       ON CONFLICT (org_id, device_id) DO UPDATE SET tokens = $3, refilled_at = clock_timestamp() + interval '1 minute'`,
      [kits[0].ids[org], kits[0].ids[key], tokens],
    );
  }

  // No approver has a phone here, so pending prompts queue no pushes: the push worker of a concurrent test file would send them.
  it('records prompts sent to each instance in turn, each with its audit row and its created event', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await on(i).ingest('deviceA1', prompt({ pid: 5000 + i })).expect(201);
      expect(res.body).toEqual({ id: expect.any(String), status: 'pending' });
      ids.push(res.body.id);
    }
    const rows = await ownerQuery<{ id: string; pid: number; audits: string; events: string }>(
      `SELECT e.id, e.pid,
              (SELECT count(*) FROM audit_logs a WHERE a.resource_id = e.id::text AND a.action = 'pam.elevation.request') AS audits,
              (SELECT count(*) FROM pam_elevation_events v WHERE v.elevation_request_id = e.id AND v.type = 'created') AS events
         FROM elevation_requests e WHERE e.id = ANY($1::uuid[]) ORDER BY e.pid`,
      [ids],
    );
    expect(rows.map((r) => [r.pid, r.audits, r.events])).toEqual([0, 1, 2, 3, 4, 5].map((i) => [5000 + i, '1', '1']));
  });

  it('decides a prompt on every instance by a software policy assigned through another', async () => {
    const policy = await kits[0].policy('adminA', { name: 'Blocked installers', features: { software: { mode: 'blocklist', entries: [{ name: 'setup.exe' }] } } }, [
      { targetType: 'site', targetId: kits[0].ids.siteA1 },
    ]);
    try {
      for (const i of [1, 2]) {
        const res = await on(i).ingest('deviceA1', prompt(SETUP)).expect(201);
        expect(await on(i).request(res.body.id)).toMatchObject({ status: 'denied', decision_source: 'software_policy', matched_policy_id: policy });
      }
      // Another site of the organization is outside the assignment.
      const other = await on(2).ingest('deviceA2', prompt(SETUP)).expect(201);
      expect(await on(2).request(other.body.id)).toMatchObject({ status: 'pending', matched_policy_id: null });
    } finally {
      await kits[0].deletePolicy('adminA', policy);
    }
  });

  it('decides by a rule written after the other instances compiled the rule set', async () => {
    // Every instance compiles the (empty) rule set first.
    for (const i of [0, 1, 2]) expect((await on(i).ingest('deviceA2', prompt(SETUP)).expect(201)).body.status).toBe('pending');
    await kits[0].rule('orgA', { name: 'Contoso installers', verdict: 'auto_approve', match_signer: 'Contoso Ltd' });
    try {
      for (const i of [1, 2, 0]) expect((await on(i).ingest('deviceA2', prompt(SETUP)).expect(201)).body.status).toBe('auto_approved');
    } finally {
      await kits[0].clearRules('orgA');
    }
  });

  it('admits a burst of at least 20 from a fresh bucket across the instances, and no more than refills meanwhile', async () => {
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => on(i).ingest('deviceB1', prompt())));
    const elapsedSeconds = (Date.now() - started) / 1000;
    expect(results.every((r) => r.status === 201 || r.status === 429)).toBe(true);
    const admitted = results.filter((r) => r.status === 201).length;
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(admitted).toBeLessThanOrEqual(20 + Math.floor(elapsedSeconds * 10) + 1);
  });

  it('spends one bucket from all instances: 30 concurrent prompts of one device against 10 tokens admit exactly 10', async () => {
    await freeze('deviceA2', 10);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => on(i).ingest('deviceA2', prompt())));
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(20);
    for (const r of refused) expect(r.body).toMatchObject({ code: 'rate_limited', retryAfter: 1 });
    // The instances opened more client connections than PgBouncer has server connections.
    const { clients, servers } = await poolerConnections(pgbouncer());
    expect(servers).toBeLessThanOrEqual(3);
    expect(clients).toBeGreaterThan(3);
  });

  it('refuses on one instance what another spent, and keeps other devices unaffected', async () => {
    await freeze('deviceA1', 2);
    await on(0).ingest('deviceA1', prompt()).expect(201);
    await on(1).ingest('deviceA1', prompt()).expect(201);
    const refused = await on(2).ingest('deviceA1', prompt()).expect(429);
    expect(refused.headers['retry-after']).toBe('1');
    await freeze('deviceB1', 1, 'orgB');
    await on(2).ingest('deviceB1', prompt()).expect(201);
  });
});
