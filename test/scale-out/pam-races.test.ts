import request from 'supertest';
import { ElevationExpiryJob } from '../../src/modules/pam/requests/elevation-expiry.job';
import { bearer, commandsOf, eventsOf, PamWorld, respond, revoke, seedRequest, splitRace, startPamWorld, storedRequest } from '../e2e/pam-lifecycle/pam-lifecycle.kit';
import { TestApp } from '../support/test-app';
import { BOOT_TIMEOUT_MS, closeInstances, pgbouncer, poolerConnections, startInstances } from './scale-out.kit';

/**
 * The lifecycle races of test/e2e/pam-lifecycle/races.e2e.test.ts with the calls spread over three
 * instances, each transaction on whichever of PgBouncer's three server connections is free.
 */
describe('races on one elevation request across three instances through PgBouncer (transaction pooling)', () => {
  /** The same seeded world seen through each instance. */
  let worlds: PamWorld[];
  let others: TestApp[];
  const via = (i: number) => worlds[i % worlds.length];
  const sweepers = () => worlds.map((w) => w.t.app.get(ElevationExpiryJob));

  beforeAll(async () => {
    const first = await startPamWorld();
    others = await startInstances(2, { PAM_ACTUATOR_ENABLED: 'true' });
    worlds = [first, ...others.map((t) => ({ ...first, t }))];
  }, BOOT_TIMEOUT_MS);
  afterAll(() => closeInstances(worlds.map((w) => w.t)));

  it('lets exactly one of 20 concurrent approve and deny calls through, whichever instance takes them; the other 19 get 409 not_pending', async () => {
    const w = via(0);
    const id = await seedRequest(w);
    const tokens = [w.mfa.adminA, w.mfa.tech, w.mfa.techA, w.mfa.siteA1User];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => respond(via(i), tokens[i % tokens.length], id, { decision: i % 2 === 0 ? 'approve' : 'deny', reason: `call ${i}` })),
    );
    const { winner: won, losers: conflicts } = splitRace(results, 200);
    const winner = won.body.status as string;
    for (const c of conflicts) expect(c.body).toMatchObject({ code: 'not_pending', currentStatus: winner });
    expect((await storedRequest(id)).status).toBe(winner);
    expect(await eventsOf(id)).toHaveLength(1);
    // Twenty requests in flight on three instances: more clients than PgBouncer's three server connections.
    const { clients, servers } = await poolerConnections(pgbouncer());
    expect(servers).toBeLessThanOrEqual(3);
    expect(clients).toBeGreaterThan(3);
  });

  it('queues exactly one command for 20 concurrent actuations spread over the instances; the other 19 get 409 race_lost', async () => {
    const id = await seedRequest(via(0), { status: 'approved' });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(via(i).t.baseUrl).post(`/api/v1/devices/${via(0).ids.deviceA1}/actuate-elevation`).set(bearer(via(0).mfa.adminA)).send({ elevationRequestId: id }),
      ),
    );
    const { losers: lost } = splitRace(results, 201);
    for (const r of lost) expect(r.body.code).toBe('race_lost');
    expect(await commandsOf(id)).toHaveLength(1);
    expect((await storedRequest(id)).status).toBe('actuating');
  });

  it('never lets a request that every instance’s sweeper is expiring be approved on another, and never expires one approved in time', async () => {
    for (let round = 0; round < 3; round++) {
      const stale = await seedRequest(via(0), { ageMinutes: 16 });
      const fresh = await seedRequest(via(0), { ageMinutes: 1 });
      const [staleRes, freshRes] = await Promise.all([
        respond(via(round + 1), via(0).mfa.adminA, stale, { decision: 'approve' }),
        respond(via(round + 2), via(0).mfa.adminA, fresh, { decision: 'approve' }),
        ...sweepers().map((s) => s.runOnce()),
      ]);
      expect(staleRes.status).toBe(409);
      expect(staleRes.body).toMatchObject({ code: 'not_pending', currentStatus: 'expired' });
      expect(freshRes.status).toBe(200);
      await Promise.all(sweepers().map((s) => s.runOnce()));
      expect((await storedRequest(stale)).status).toBe('expired');
      expect((await eventsOf(stale)).map((e) => e.type)).toEqual(['expired']);
      expect((await storedRequest(fresh)).status).toBe('approved');
      expect((await eventsOf(fresh)).map((e) => e.type)).toEqual(['approved']);
    }
  });

  it('expires each overdue request exactly once when the three instances’ sweepers run at the same moment', async () => {
    const ids = await Promise.all(Array.from({ length: 30 }, () => seedRequest(via(0), { ageMinutes: 20 })));
    await Promise.all(sweepers().map((s) => s.runOnce()));
    for (const id of ids) {
      expect((await storedRequest(id)).status).toBe('expired');
      expect((await eventsOf(id)).map((e) => e.type)).toEqual(['expired']);
    }
  });

  it('ends an elevation exactly once when a revoke on one instance races the sweepers of all three at the end of its window', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await seedRequest(via(0), { status: 'actuating', expiresInMinutes: 0.02 });
      await new Promise((r) => setTimeout(r, 1000 + round * 50));
      const [res] = await Promise.all([revoke(via(round), via(0).mfa.adminA, id, { reason: 'race' }), ...sweepers().map((s) => s.runOnce())]);
      await Promise.all(sweepers().map((s) => s.runOnce()));
      const events = (await eventsOf(id)).map((e) => e.type);
      expect(events).toHaveLength(1);
      const final = (await storedRequest(id)).status;
      expect(final).toBe(res.status === 200 ? 'revoked' : 'expired');
      expect(events[0]).toBe(final);
      expect((await commandsOf(id)).filter((c) => c.type === 'revoke_elevation')).toHaveLength(1);
    }
  });
});
