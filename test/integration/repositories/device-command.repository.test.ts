import { DeviceCommandRepository } from '../../../src/modules/pam/requests/device-command.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * PAM's device commands as agents meet them: the poll (app_agent_commands_take, one statement that
 * withdraws what must not reach the device and hands out what is due), acknowledgements and
 * commands. An agent runs under its own organization's scope; the reads of many agents at once are
 * in command-queue-reads.test.ts.
 */
describe('DeviceCommandRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let commands: DeviceCommandRepository;
  const asAgentA = () => orgPrincipal(t.orgA);

  beforeAll(async () => {
    m = await startMedium([DeviceCommandRepository]);
    commands = m.get(DeviceCommandRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  const queue = async (orgId: string, deviceId: string, type: 'actuate_elevation' | 'revoke_elevation', requestId: string, secondsAgo: number) =>
    (
      await m.owner.query<{ id: string }>(
        `INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id, created_at)
         VALUES ($1, $2, $3, jsonb_build_object('elevationRequestId', $4::uuid), $4, now() - make_interval(secs => $5)) RETURNING id`,
        [orgId, deviceId, type, requestId, secondsAgo],
      )
    ).rows[0].id;
  const statusOf = async (id: string) => (await m.owner.query(`SELECT status, error FROM device_commands WHERE id = $1`, [id])).rows[0];
  /** Long enough that nothing in these tests is handed out again unless a test moves delivered_at back. */
  const REDELIVER = 3600;
  const deliveredSecondsAgo = (id: string, seconds: number) => m.owner.query(`UPDATE device_commands SET delivered_at = now() - make_interval(secs => $2) WHERE id = $1`, [id, seconds]);

  it('hands out queued commands oldest first, at most the limit, each only once', async () => {
    const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
    const first = await queue(t.orgA, t.deviceA1, 'actuate_elevation', req, 30);
    const second = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 20);
    const third = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 10);
    const page = await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 2, REDELIVER).then((x) => x.commands));
    expect(page.map((c) => [c.id, c.status])).toEqual([
      [first, 'delivered'],
      [second, 'delivered'],
    ]);
    expect(page[0].payload).toEqual({ elevationRequestId: req });
    expect((await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).map((c) => c.id)).toEqual([third]);
    expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
  });

  it('withdraws a queued actuation whose request is no longer actuating instead of delivering it', async () => {
    const revoked = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA2, deviceId: t.deviceA2, status: 'revoked' });
    const id = await queue(t.orgA, t.deviceA2, 'actuate_elevation', revoked, 5);
    expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA2, t.agentA2.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
    expect(await statusOf(id)).toEqual({ status: 'failed', error: 'Elevation no longer actuating when the agent fetched the command' });
  });

  it('records a result once, and the command keeps it', async () => {
    const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
    const id = await queue(t.orgA, t.deviceA1, 'actuate_elevation', req, 1);
    await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands));
    expect(await m.as(asAgentA(), () => commands.complete(t.orgA, t.deviceA1, id, 'completed', null))).toMatchObject({ id, status: 'completed' });
    expect(await m.as(asAgentA(), () => commands.complete(t.orgA, t.deviceA1, id, 'failed', 'late'))).toBeNull();
    expect(await statusOf(id)).toEqual({ status: 'completed', error: null });
    expect(await m.as(asAgentA(), () => commands.complete(t.orgA, t.deviceA2, id, 'failed', 'wrong device'))).toBeNull();
  });

  it('neither hands out nor completes another tenant’s commands', async () => {
    const theirs = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1, status: 'actuating' });
    const id = await queue(t.orgB, t.deviceB1, 'actuate_elevation', theirs, 1);
    expect(await m.as(asAgentA(), () => commands.take(t.orgB, t.deviceB1, t.agentB1.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
    expect(await m.as(asAgentA(), () => commands.complete(t.orgB, t.deviceB1, id, 'completed', null))).toBeNull();
    expect(await statusOf(id)).toEqual({ status: 'queued', error: null });
  });

  it('hands a delivered command out again once the redelivery time has passed without an acknowledgement, and counts the deliveries', async () => {
    const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
    const id = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 1);
    expect((await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).map((c) => [c.id, c.delivery_count])).toEqual([[id, 1]]);
    const none = await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER));
    expect(none.commands).toEqual([]);
    // Nothing due: the take says when the unacknowledged delivery falls due again (an hour, less the test's own time).
    expect(none.redeliverInMs).toBeGreaterThan((REDELIVER - 600) * 1000);
    expect(none.redeliverInMs).toBeLessThanOrEqual(REDELIVER * 1000);
    await deliveredSecondsAgo(id, REDELIVER + 1);
    expect((await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).map((c) => [c.id, c.delivery_count])).toEqual([[id, 2]]);
  });

  it('never hands out again a command acknowledged, or one whose result is reported', async () => {
    const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
    const acked = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 2);
    const reported = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 1);
    await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands));
    expect(await m.as(asAgentA(), () => commands.acknowledge(t.orgA, t.deviceA1, acked))).toEqual({ status: 'delivered' });
    expect(await m.as(asAgentA(), () => commands.acknowledge(t.orgA, t.deviceA1, acked))).toEqual({ status: 'delivered' });
    await m.as(asAgentA(), () => commands.complete(t.orgA, t.deviceA1, reported, 'completed', null));
    await deliveredSecondsAgo(acked, REDELIVER + 1);
    await deliveredSecondsAgo(reported, REDELIVER + 1);
    expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
    expect(await m.as(asAgentA(), () => commands.acknowledge(t.orgB, t.deviceB1, acked))).toBeNull();
  });

  it('withdraws a delivered, unacknowledged actuation whose request has since been revoked, instead of delivering it again late', async () => {
    const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA2, deviceId: t.deviceA2, status: 'actuating' });
    const id = await queue(t.orgA, t.deviceA2, 'actuate_elevation', req, 1);
    expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA2, t.agentA2.id, 10, REDELIVER).then((x) => x.commands))).toHaveLength(1);
    await m.owner.query(`UPDATE elevation_requests SET status = 'revoked' WHERE id = $1`, [req]);
    await deliveredSecondsAgo(id, REDELIVER + 1);
    expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA2, t.agentA2.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
    expect(await statusOf(id)).toEqual({ status: 'failed', error: 'Elevation no longer actuating when the agent fetched the command' });
  });

  it('hands nothing to an agent of the device whose token has been revoked, nor to another device’s agent', async () => {
    const req = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1, status: 'actuating' });
    const id = await queue(t.orgA, t.deviceA1, 'revoke_elevation', req, 1);
    expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA2.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
    await m.owner.query(`UPDATE agents SET revoked_at = now() WHERE id = $1`, [t.agentA1.id]);
    try {
      expect(await m.as(asAgentA(), () => commands.take(t.orgA, t.deviceA1, t.agentA1.id, 10, REDELIVER).then((x) => x.commands))).toEqual([]);
      expect(await statusOf(id)).toEqual({ status: 'queued', error: null });
    } finally {
      await m.owner.query(`UPDATE agents SET revoked_at = NULL WHERE id = $1`, [t.agentA1.id]);
    }
  });
});
