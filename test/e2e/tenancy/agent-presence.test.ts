import request from 'supertest';
import { AgentPresenceService } from '../../../src/modules/tenancy/devices/agent-presence.service';
import { AgentKit, prompt } from '../agent/agent-kit';
import { recordPgMessages } from '../../support/pg-messages';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

/**
 * Issue 28, item 5: agents.last_seen_at is written from the agents' requests, coalesced (one
 * statement per flush for every agent seen), and devices show it with an online/offline state.
 */

interface DeviceBody {
  id: string;
  lastSeenAt: string | null;
  agentStatus: 'online' | 'offline' | 'never';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads until `ok` holds or `ms` has passed; answers the last read. */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await read();
  while (!ok(v) && Date.now() < deadline) {
    await sleep(50);
    v = await read();
  }
  return v;
}

function agentCalls(k: AgentKit, key: string) {
  const a = k.agent(key);
  const as = (r: request.Test, token = a.token) => r.set('Authorization', `Bearer ${token}`);
  return {
    settings: () => k.settings(key),
    poll: (opts: { token?: string } = {}) => as(request(k.t.http).get(`/api/v1/agents/${a.id}/commands`), opts.token),
    ingest: () => k.ingest(key, prompt()),
  };
}

const lastSeen = async (agentId: string) => (await ownerQuery<{ last_seen_at: Date | null }>(`SELECT last_seen_at FROM agents WHERE id = $1`, [agentId]))[0].last_seen_at;

describe('agents are seen: devices show when their agent last called and whether it is online', () => {
  // A short interval and threshold, so that the flush timer and the offline transition happen within the test.
  const FLUSH_MS = 100;
  const ONLINE_MS = 1500;
  let t: TestApp;
  let k: AgentKit;
  const device = async (who: string, key: string) => (await request(t.http).get(`/api/v1/devices/${k.ids[key]}`).set('Authorization', k.admin[who])).body.device as DeviceBody;
  const list = async (who: string, query = '') => {
    const res = await request(t.http).get(`/api/v1/devices${query}`).set('Authorization', k.admin[who]);
    return { status: res.status, ids: ((res.body.devices ?? []) as DeviceBody[]).map((d) => d.id).sort(), devices: (res.body.devices ?? []) as DeviceBody[] };
  };

  beforeAll(async () => {
    t = await startTestApp({ AGENT_PRESENCE_FLUSH_MS: String(FLUSH_MS), AGENT_ONLINE_THRESHOLD_MS: String(ONLINE_MS) });
    k = await new AgentKit(t).seed();
  });
  afterAll(() => t.close());

  /**
   * The agent calls, then the device is read until it shows online. A device shows online only
   * while its last sighting is younger than the threshold, so on a machine too busy to flush and
   * read within it after the call, that round proves nothing and the agent calls again; a round
   * that had the whole threshold and never saw it online fails.
   */
  async function callUntilOnline(): Promise<DeviceBody> {
    for (let round = 0; round < 10; round++) {
      const calledAt = Date.now();
      expect((await agentCalls(k, 'deviceA1').poll()).status).toBe(200);
      // This call's sighting, or one kept because it was within a flush interval before it (the writes are coalesced).
      const seenNow = (d: DeviceBody) => d.agentStatus === 'online' && new Date(d.lastSeenAt!).getTime() >= calledAt - FLUSH_MS;
      const read = await until(() => device('adminA', 'deviceA1'), seenNow, ONLINE_MS);
      if (seenNow(read)) return read;
      expect(Date.now() - calledAt).toBeGreaterThanOrEqual(ONLINE_MS);
    }
    throw new Error('the machine never flushed and read a sighting within the online threshold in ten rounds');
  }

  /** Answers `read` made while the device is certainly online: started and finished within the threshold of a sighting. */
  async function whileOnline<T>(read: () => Promise<T>): Promise<T> {
    for (let round = 0; round < 10; round++) {
      const seen = await callUntilOnline();
      const value = await read();
      if (Date.now() < new Date(seen.lastSeenAt!).getTime() + ONLINE_MS - 100) return value;
    }
    throw new Error('the machine never read the devices within the online threshold of a sighting in ten rounds');
  }

  it('shows never, with no lastSeenAt, for a device whose agent has not called and for a device without an agent', async () => {
    expect(await device('adminA', 'deviceA1')).toMatchObject({ lastSeenAt: null, agentStatus: 'never' });
    const created = await request(t.http).post('/api/v1/devices').set('Authorization', k.admin.adminA).send({ siteId: k.ids.siteA1, hostname: `NO-AGENT-${Date.now()}` });
    expect(created.status).toBe(201);
    expect(created.body.device).toMatchObject({ agentId: null, lastSeenAt: null, agentStatus: 'never' });
  });

  it("shows a device online, with the time of its agent's last request, once the agent has read its settings, polled and raised a prompt", async () => {
    const calls = agentCalls(k, 'deviceA1');
    let before = 0;
    let after = 0;
    let seen: DeviceBody | null = null;
    // A round whose sighting was not read within the online threshold (a busy machine) proves nothing: the agent calls again.
    for (let round = 0; round < 10 && !seen; round++) {
      before = Date.now();
      expect((await calls.settings()).status).toBe(200);
      expect((await calls.poll()).status).toBe(200);
      expect((await calls.ingest()).status).toBeLessThan(300);
      after = Date.now();
      const read = await until(() => device('adminA', 'deviceA1'), (d) => d.agentStatus === 'online', ONLINE_MS);
      if (read.agentStatus === 'online') seen = read;
      else expect(Date.now() - after).toBeGreaterThanOrEqual(ONLINE_MS);
    }
    if (!seen) throw new Error('the machine never flushed and read a sighting within the online threshold in ten rounds');
    // Written from the database's clock, which this machine shares.
    expect(new Date(seen.lastSeenAt!).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(seen.lastSeenAt!).getTime()).toBeLessThanOrEqual(after + 1000);
    const listed = (await whileOnline(() => list('adminA'))).devices.find((d) => d.id === k.ids.deviceA1);
    expect(listed).toMatchObject({ agentStatus: 'online' });
    expect(new Date(listed!.lastSeenAt!).getTime()).toBeGreaterThanOrEqual(new Date(seen.lastSeenAt!).getTime());
  });

  it('filters the device list by agent state, and refuses a state that does not exist', async () => {
    expect((await whileOnline(() => list('adminA', '?agentStatus=online'))).ids).toEqual([k.ids.deviceA1]);
    expect((await list('adminA', '?agentStatus=never')).ids).toContain(k.ids.deviceA2);
    expect((await list('adminA', '?agentStatus=never')).ids).not.toContain(k.ids.deviceA1);
    expect((await whileOnline(() => list('adminA', '?agentStatus=offline'))).ids).toEqual([]);
    // A page past the end still counts the filtered devices.
    const past = await whileOnline(() => request(t.http).get('/api/v1/devices?agentStatus=online&page=2&limit=1').set('Authorization', k.admin.adminA));
    expect(past.body).toMatchObject({ devices: [], pagination: { page: 2, limit: 1, total: 1 } });
    expect((await list('adminA', '?agentStatus=asleep')).status).toBe(400);
  });

  it("does not show another organization's device or its state", async () => {
    expect((await request(t.http).get(`/api/v1/devices/${k.ids.deviceA1}`).set('Authorization', k.admin.adminB)).status).toBe(404);
    expect((await list('adminB', '?agentStatus=online')).ids).toEqual([]);
    const own = await list('adminB');
    expect(own.ids).toEqual([k.ids.deviceB1]);
    expect(own.devices[0]).toMatchObject({ lastSeenAt: null, agentStatus: 'never' });
  });

  it('turns a device offline, keeping its last sighting, once its agent has not called for the threshold, and online again when it calls', async () => {
    const online = await callUntilOnline();
    const offline = await until(() => device('adminA', 'deviceA1'), (d) => d.agentStatus === 'offline', ONLINE_MS + 10_000);
    expect(offline).toMatchObject({ agentStatus: 'offline', lastSeenAt: online.lastSeenAt });
    expect(Date.now() - new Date(offline.lastSeenAt!).getTime()).toBeGreaterThanOrEqual(ONLINE_MS);
    expect((await list('adminA', '?agentStatus=offline')).ids).toEqual([k.ids.deviceA1]);
    expect((await list('adminA', '?agentStatus=online')).ids).toEqual([]);

    const back = await callUntilOnline();
    expect(new Date(back.lastSeenAt!).getTime()).toBeGreaterThan(new Date(online.lastSeenAt!).getTime());
  });
});

describe('agents are seen: the writes are coalesced', () => {
  // The default interval (30 s): nothing flushes on its own during these tests, each flush is the test's.
  let t: TestApp;
  let k: AgentKit;
  let presence: AgentPresenceService;
  let closed = false;

  beforeAll(async () => {
    t = await startTestApp({ AGENT_PRESENCE_FLUSH_MS: undefined, AGENT_ONLINE_THRESHOLD_MS: undefined });
    k = await new AgentKit(t).seed();
    presence = t.app.get(AgentPresenceService);
  });
  afterAll(async () => {
    if (!closed) await t.close();
  });

  it('writes forty requests of two agents within one interval as one UPDATE of agents, one row per agent', async () => {
    const messages = recordPgMessages(t.app);
    const a1 = agentCalls(k, 'deviceA1');
    const a2 = agentCalls(k, 'deviceA2');
    let written = -1;
    const sent = await messages.during(async () => {
      for (let i = 0; i < 20; i++) {
        expect((await a1.settings()).status).toBe(200);
        expect((await a2.poll()).status).toBe(200);
      }
      written = await presence.flush();
    });
    expect(sent.filter((m) => /UPDATE agents/.test(m))).toHaveLength(1);
    expect(written).toBe(2);
    expect(await lastSeen(k.agent('deviceA1').id)).not.toBeNull();
    expect(await lastSeen(k.agent('deviceA2').id)).not.toBeNull();
    expect(await lastSeen(k.agent('deviceB1').id)).toBeNull();
  });

  it('skips an agent whose stored sighting is already within an interval of the new one', async () => {
    const stored = await lastSeen(k.agent('deviceA1').id);
    expect((await agentCalls(k, 'deviceA1').settings()).status).toBe(200);
    expect(await presence.flush()).toBe(0);
    expect(await lastSeen(k.agent('deviceA1').id)).toEqual(stored);
  });

  it("marks no agent seen for a token used on another agent's path", async () => {
    const res = await agentCalls(k, 'deviceA1').poll({ token: k.agent('deviceB1').token });
    expect(res.status).toBe(401);
    expect(presence.pendingCount).toBe(0);
    await presence.flush();
    expect(await lastSeen(k.agent('deviceB1').id)).toBeNull();
  });

  it('writes the sightings not yet flushed when the application closes', async () => {
    expect((await agentCalls(k, 'deviceB1').settings()).status).toBe(200);
    expect(presence.pendingCount).toBe(1);
    closed = true;
    await t.close();
    expect(await lastSeen(k.agent('deviceB1').id)).not.toBeNull();
  });
});
