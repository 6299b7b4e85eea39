import request from 'supertest';
import { DrainState } from '../../../src/modules/health/drain-state';
import { CommandWakeups } from '../../../src/modules/agent/commands/command-wakeups';
import { PgListener } from '../../../src/infra/database/pg-listener.service';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { bearer, commandsOf, PamWorld, seedRequest, startPamWorld } from '../pam-lifecycle/pam-lifecycle.kit';

/**
 * The agent's held command channel (docs/pam-lifecycle.md, "The command channel"): a wait on
 * `GET /agents/:id/commands?wait=` is answered when a command for the device commits, on whichever
 * instance queued it; delivery is at least once until acknowledged; a stopping instance lets its
 * agents go with a reconnect hint.
 */
describe('the agent command channel', () => {
  let w: PamWorld;
  let other: TestApp;

  beforeAll(async () => {
    w = await startPamWorld({ AGENT_COMMAND_REDELIVER_SECONDS: '1' });
    // A second instance on the same database: a wait held on one is woken by a command queued on the other.
    other = await startTestApp({ PAM_ACTUATOR_ENABLED: 'true' }, { listen: true });
    for (const t of [w.t, other]) await until(() => t.app.get(PgListener).connected);
  });
  afterAll(async () => {
    await other.close();
    await w.t.close();
  });

  const wait = (device: string, seconds: number | string, token = w.agentTokens[device], base = w.t.baseUrl) =>
    request(base).get(`/api/v1/agents/${w.agentIds[device]}/commands?wait=${seconds}`).set(bearer(token));
  /** A wait sent now (a supertest request is sent only once awaited). */
  const held = (device: string, seconds: number) => wait(device, seconds).then((r) => r);
  const actuate = (base: string, requestId: string, device = w.ids.deviceA1) =>
    request(base).post(`/api/v1/devices/${device}/actuate-elevation`).set(bearer(w.mfa.adminA)).send({ elevationRequestId: requestId });
  const ack = (device: string, commandId: string, token = w.agentTokens[device]) =>
    request(w.t.baseUrl).post(`/api/v1/agents/${w.agentIds[device]}/commands/${commandId}/ack`).set(bearer(token));
  const holding = () => w.t.app.get(CommandWakeups).size;

  it('answers a held wait with the command queued on another instance, long before the wait ends', async () => {
    const id = await seedRequest(w, { status: 'approved' });
    const waiting = wait('deviceA1', 30).then((r) => ({ r, at: Date.now() }));
    await until(() => holding() === 1);
    const queued = await actuate(other.baseUrl, id).expect(201);
    const committedAt = Date.now();
    const { r, at } = await waiting;
    expect(r.status).toBe(200);
    expect(r.body.commands).toEqual([expect.objectContaining({ id: queued.body.commandId, type: 'actuate_elevation', deliveryCount: 1 })]);
    // Woken by the notification: with the notification connection up a wait does not poll, and its end (30 s) is far off.
    expect(w.t.app.get(CommandWakeups).notified).toBe(true);
    expect(at - committedAt).toBeLessThan(25_000);
    expect(holding()).toBe(0);
    await ack('deviceA1', queued.body.commandId).expect(200);
  });

  it('answers at once when a command is already due, and a plain poll (no wait) still answers at once with none', async () => {
    const id = await seedRequest(w, { status: 'approved' });
    const queued = await actuate(w.t.baseUrl, id).expect(201);
    expect((await wait('deviceA1', 30).expect(200)).body.commands.map((c: { id: string }) => c.id)).toEqual([queued.body.commandId]);
    await ack('deviceA1', queued.body.commandId).expect(200);
    expect((await request(w.t.baseUrl).get(`/api/v1/agents/${w.agentIds.deviceA1}/commands`).set(bearer(w.agentTokens.deviceA1)).expect(200)).body).toEqual({ commands: [] });
  });

  it('ends a wait with an empty list at its end, and keeps a wait of one device from being woken by another device’s command', async () => {
    const id = await seedRequest(w, { status: 'approved', device: 'deviceA2', site: 'siteA2' });
    const waiting = held('deviceA1', 2);
    await until(() => holding() === 1);
    const queued = await actuate(other.baseUrl, id, w.ids.deviceA2).expect(201);
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual({ commands: [] });
    expect((await wait('deviceA2', 0).expect(200)).body.commands.map((c: { id: string }) => c.id)).toEqual([queued.body.commandId]);
    await ack('deviceA2', queued.body.commandId).expect(200);
  });

  it('hands an unacknowledged command out again after the redelivery time, and never once it is acknowledged', async () => {
    const id = await seedRequest(w, { status: 'approved' });
    const queued = await actuate(w.t.baseUrl, id).expect(201);
    const first = (await wait('deviceA1', 0).expect(200)).body.commands;
    expect(first).toEqual([expect.objectContaining({ id: queued.body.commandId, deliveryCount: 1 })]);
    // The agent crashed before acknowledging: its next wait gets the command again.
    const again = (await wait('deviceA1', 10).expect(200)).body.commands;
    expect(again).toEqual([expect.objectContaining({ id: queued.body.commandId, deliveryCount: 2 })]);
    expect((await ack('deviceA1', queued.body.commandId).expect(200)).body).toEqual({ commandId: queued.body.commandId, status: 'delivered' });
    expect((await ack('deviceA1', queued.body.commandId).expect(200)).body.status).toBe('delivered');
    expect((await wait('deviceA1', 2).expect(200)).body).toEqual({ commands: [] });
  });

  it('refuses an acknowledgement for another device’s or another tenant’s command with 404, and a bad wait with 400', async () => {
    const id = await seedRequest(w, { status: 'approved' });
    const queued = await actuate(w.t.baseUrl, id).expect(201);
    await ack('deviceA2', queued.body.commandId).expect(404);
    await ack('deviceB1', queued.body.commandId).expect(404);
    expect((await commandsOf(id))[0].status).toBe('queued');
    for (const bad of ['61', '-1', 'abc', '1.5']) expect((await wait('deviceA1', bad).expect(400)).body.code).toBe('validation_failed');
    await wait('deviceA1', 0).expect(200);
    await ack('deviceA1', queued.body.commandId).expect(200);
  });

  it('gives nothing to a held wait whose agent token is revoked while it waits', async () => {
    const id = await seedRequest(w, { status: 'approved', device: 'deviceA2', site: 'siteA2' });
    const waiting = held('deviceA2', 3);
    await until(() => holding() === 1);
    await ownerQuery(`UPDATE agents SET revoked_at = now() WHERE id = $1`, [w.agentIds.deviceA2]);
    try {
      await actuate(w.t.baseUrl, id, w.ids.deviceA2).expect(201);
      const answered = await waiting;
      expect(answered.status).toBe(200);
      expect(answered.body).toEqual({ commands: [] });
      expect((await commandsOf(id))[0].status).toBe('queued');
    } finally {
      await ownerQuery(`UPDATE agents SET revoked_at = NULL WHERE id = $1`, [w.agentIds.deviceA2]);
    }
    await wait('deviceA2', 0).expect(200);
  });

  it('lets a wait go when its agent disconnects', async () => {
    const req = wait('deviceA1', 30);
    const gone = req.then(
      () => undefined,
      () => undefined,
    );
    await until(() => holding() === 1);
    req.abort();
    await gone;
    await until(() => holding() === 0);
  });

  it('answers every held wait of a stopping instance with an empty list and a reconnect pause between 0.5 and 8 s', async () => {
    const waits = [held('deviceA1', 30), held('deviceA2', 30)];
    await until(() => other.app.get(CommandWakeups).size + holding() === 2);
    w.t.app.get(DrainState).start(10_000);
    for (const r of await Promise.all(waits)) {
      expect(r.status).toBe(200);
      expect(r.body.commands).toEqual([]);
      expect(r.body.reconnectAfterMs).toBeGreaterThanOrEqual(500);
      expect(r.body.reconnectAfterMs).toBeLessThanOrEqual(8000);
    }
  });
});

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
