import request from 'supertest';
import { ElevationExpiryJob } from '../../../src/modules/pam/requests/elevation-expiry.job';
import { bearer, commandsOf, eventsOf, PamWorld, respond, revoke, seedRequest, splitRace, startPamWorld, storedRequest } from './pam-lifecycle.kit';

/** Real parallel HTTP requests against one instance: each runs in its own transaction on its own connection. */
describe('races on one elevation request', () => {
  let w: PamWorld;

  beforeAll(async () => {
    w = await startPamWorld();
  });
  afterAll(() => w.t.close());

  it('lets exactly one of 20 concurrent approve and deny calls through; the other 19 get 409 not_pending', async () => {
    const id = await seedRequest(w);
    const tokens = [w.mfa.adminA, w.mfa.tech, w.mfa.techA, w.mfa.siteA1User];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => respond(w, tokens[i % tokens.length], id, { decision: i % 2 === 0 ? 'approve' : 'deny', reason: `call ${i}` })),
    );
    const { winner: won, losers: conflicts } = splitRace(results, 200);
    const winner = won.body.status as string;
    for (const c of conflicts) expect(c.body).toMatchObject({ code: 'not_pending', currentStatus: winner });
    expect((await storedRequest(id)).status).toBe(winner);
    expect(await eventsOf(id)).toHaveLength(1);
  });

  it('queues exactly one command for 20 concurrent actuations; the other 19 get 409 race_lost', async () => {
    const id = await seedRequest(w, { status: 'approved' });
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        request(w.t.baseUrl).post(`/api/v1/devices/${w.ids.deviceA1}/actuate-elevation`).set(bearer(w.mfa.adminA)).send({ elevationRequestId: id }),
      ),
    );
    const { losers: lost } = splitRace(results, 201);
    for (const r of lost) expect(r.body.code).toBe('race_lost');
    expect(await commandsOf(id)).toHaveLength(1);
    expect((await storedRequest(id)).status).toBe('actuating');
  });

  it('never lets a request the sweeper is expiring be approved, and never expires one that was approved in time', async () => {
    const sweeper = w.t.app.get(ElevationExpiryJob);
    for (let round = 0; round < 5; round++) {
      const stale = await seedRequest(w, { ageMinutes: 16 });
      const fresh = await seedRequest(w, { ageMinutes: 1 });
      const [staleRes, freshRes] = await Promise.all([
        respond(w, w.mfa.adminA, stale, { decision: 'approve' }),
        respond(w, w.mfa.adminA, fresh, { decision: 'approve' }),
        sweeper.runOnce(),
      ]);
      expect(staleRes.status).toBe(409);
      expect(staleRes.body).toMatchObject({ code: 'not_pending', currentStatus: 'expired' });
      expect(freshRes.status).toBe(200);
      await sweeper.runOnce();
      expect((await storedRequest(stale)).status).toBe('expired');
      expect((await eventsOf(stale)).map((e) => e.type)).toEqual(['expired']);
      expect((await storedRequest(fresh)).status).toBe('approved');
      expect((await eventsOf(fresh)).map((e) => e.type)).toEqual(['approved']);
    }
  });

  it('ends an elevation exactly once when revoke races the sweeper at the end of its window', async () => {
    const sweeper = w.t.app.get(ElevationExpiryJob);
    for (let round = 0; round < 5; round++) {
      const id = await seedRequest(w, { status: 'actuating', expiresInMinutes: 0.02 });
      await new Promise((r) => setTimeout(r, 1000 + round * 50));
      const [res] = await Promise.all([revoke(w, w.mfa.adminA, id, { reason: 'race' }), sweeper.runOnce()]);
      await sweeper.runOnce();
      const events = (await eventsOf(id)).map((e) => e.type);
      expect(events).toHaveLength(1);
      const final = (await storedRequest(id)).status;
      expect(final).toBe(res.status === 200 ? 'revoked' : 'expired');
      expect(events[0]).toBe(final);
      expect((await commandsOf(id)).filter((c) => c.type === 'revoke_elevation')).toHaveLength(1);
    }
  });
});
