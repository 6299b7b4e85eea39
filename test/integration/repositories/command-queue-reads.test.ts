import { CommandQueueReads } from '../../../src/modules/agent/commands/command-queue-reads';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { DeviceCommandRepository } from '../../../src/modules/pam/requests/device-command.repository';
import { DeviceCommandService } from '../../../src/modules/pam/requests/device-command.service';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Agents' reads of their command queues sent together (docs/pam-lifecycle.md, "A fleet coming
 * back"): PAM's one-statement read of many queues (DeviceCommandRepository.takeMany), and the
 * agent module's gathering of the reads that arrive in one turn of the event loop.
 */
describe('reading many agents’ command queues at once', () => {
  let m: Medium;
  let t: TenantRows;
  let commands: DeviceCommandRepository;
  let reads: CommandQueueReads;
  const REDELIVER = 3600;
  const BATCHED = 'read agents’ command queues in one statement';
  const batches = () => m.get(TenantTransactionService).systemContextCounts()[BATCHED] ?? 0;

  beforeAll(async () => {
    m = await startMedium([DeviceCommandRepository, DeviceCommandService, CommandQueueReads], { AGENT_COMMAND_REDELIVER_SECONDS: String(REDELIVER) });
    commands = m.get(DeviceCommandRepository);
    reads = m.get(CommandQueueReads);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  const queue = async (orgId: string, deviceId: string, requestId: string, secondsAgo: number) =>
    (
      await m.owner.query<{ id: string }>(
        `INSERT INTO device_commands (org_id, device_id, type, payload, elevation_request_id, created_at)
         VALUES ($1, $2, 'revoke_elevation', jsonb_build_object('elevationRequestId', $3::uuid), $3, now() - make_interval(secs => $4)) RETURNING id`,
        [orgId, deviceId, requestId, secondsAgo],
      )
    ).rows[0].id;
  const actuating = (orgId: string, siteId: string, deviceId: string) => insertRequest(m.owner, { orgId, siteId, deviceId, status: 'actuating' });

  it('answers each read of one statement exactly as alone, in the order given, across tenants', async () => {
    const a1First = await queue(t.orgA, t.deviceA1, await actuating(t.orgA, t.siteA1, t.deviceA1), 20);
    const a1Second = await queue(t.orgA, t.deviceA1, await actuating(t.orgA, t.siteA1, t.deviceA1), 10);
    const b1 = await queue(t.orgB, t.deviceB1, await actuating(t.orgB, t.siteB1, t.deviceB1), 5);
    const a2 = await queue(t.orgA, t.deviceA2, await actuating(t.orgA, t.siteA2, t.deviceA2), 5);
    // Delivered an hour less a minute ago and not acknowledged: nothing due, the read says when it is.
    await m.owner.query(`UPDATE device_commands SET status = 'delivered', delivered_at = now() - interval '59 minutes', delivery_count = 1 WHERE id = $1`, [a2]);

    const takes = await m.system(() =>
      commands.takeMany(
        [
          { orgId: t.orgA, deviceId: t.deviceA1, agentId: t.agentA1.id },
          { orgId: t.orgA, deviceId: t.deviceA2, agentId: t.agentA2.id },
          { orgId: t.orgB, deviceId: t.deviceB1, agentId: t.agentB1.id },
          // Another device's agent, and the first device read a second time in the same statement.
          { orgId: t.orgA, deviceId: t.deviceA1, agentId: t.agentA2.id },
          { orgId: t.orgA, deviceId: t.deviceA1, agentId: t.agentA1.id },
        ],
        10,
        REDELIVER,
      ),
    );

    expect(takes.map((x) => x.commands.map((c) => [c.id, c.status, c.delivery_count]))).toEqual([
      [
        [a1First, 'delivered', 1],
        [a1Second, 'delivered', 1],
      ],
      [],
      [[b1, 'delivered', 1]],
      [],
      [],
    ]);
    expect(takes[1].redeliverInMs).toBeGreaterThan(0);
    expect(takes[1].redeliverInMs).toBeLessThanOrEqual(60_000);
    // The second read of the first device is told when what the first read handed out falls due again.
    expect(takes[4].redeliverInMs).toBeGreaterThan((REDELIVER - 600) * 1000);
    expect(takes[0].redeliverInMs).toBeNull();
    expect(takes[3].redeliverInMs).toBeNull();
  });

  it('hands nothing to a read whose agent token is revoked, while the other reads of the statement get theirs', async () => {
    const a1 = await queue(t.orgA, t.deviceA1, await actuating(t.orgA, t.siteA1, t.deviceA1), 3);
    const a2 = await queue(t.orgA, t.deviceA2, await actuating(t.orgA, t.siteA2, t.deviceA2), 3);
    await m.owner.query(`UPDATE agents SET revoked_at = now() WHERE id = $1`, [t.agentA1.id]);
    try {
      const takes = await m.system(() =>
        commands.takeMany(
          [
            { orgId: t.orgA, deviceId: t.deviceA1, agentId: t.agentA1.id },
            { orgId: t.orgA, deviceId: t.deviceA2, agentId: t.agentA2.id },
          ],
          10,
          REDELIVER,
        ),
      );
      expect(takes.map((x) => x.commands.map((c) => c.id))).toEqual([[], [a2]]);
      expect((await m.owner.query(`SELECT status FROM device_commands WHERE id = $1`, [a1])).rows[0].status).toBe('queued');
    } finally {
      await m.owner.query(`UPDATE agents SET revoked_at = NULL WHERE id = $1`, [t.agentA1.id]);
    }
    await m.system(() => commands.takeMany([{ orgId: t.orgA, deviceId: t.deviceA1, agentId: t.agentA1.id }], 10, REDELIVER));
  });

  it('answers an empty list of reads with none, and refuses lists of different lengths', async () => {
    expect(await m.system(() => commands.takeMany([], 10, REDELIVER))).toEqual([]);
    await expect(
      m.owner.query(`SELECT * FROM app_agent_commands_take_many($1::uuid[], $2::uuid[], $3::uuid[], 10, interval '1 hour')`, [[t.orgA], [], []]),
    ).rejects.toThrow(/1 organizations, 0 devices and 0 agents/);
  });

  it('sends the reads that arrive in one turn as one statement, each answered with its own device’s commands', async () => {
    const a1 = await queue(t.orgA, t.deviceA1, await actuating(t.orgA, t.siteA1, t.deviceA1), 2);
    const b1 = await queue(t.orgB, t.deviceB1, await actuating(t.orgB, t.siteB1, t.deviceB1), 2);
    const before = batches();
    const [forA1, forA2, forB1] = await Promise.all([
      reads.take({ orgId: t.orgA, deviceId: t.deviceA1, agentId: t.agentA1.id }, orgPrincipal(t.orgA)),
      reads.take({ orgId: t.orgA, deviceId: t.deviceA2, agentId: t.agentA2.id }, orgPrincipal(t.orgA)),
      reads.take({ orgId: t.orgB, deviceId: t.deviceB1, agentId: t.agentB1.id }, orgPrincipal(t.orgB)),
    ]);
    expect(batches()).toBe(before + 1);
    expect(forA1.commands.map((c) => c.id)).toEqual([a1]);
    expect(forB1.commands.map((c) => c.id)).toEqual([b1]);
    expect(forA2.commands).toEqual([]);
  });

  it('runs a read that arrives alone with its agent’s own settings, which see no other tenant’s queue', async () => {
    const b1 = await queue(t.orgB, t.deviceB1, await actuating(t.orgB, t.siteB1, t.deviceB1), 2);
    const before = batches();
    // A device of organization B read under organization A's settings: row-level security hides its queue.
    expect((await reads.take({ orgId: t.orgB, deviceId: t.deviceB1, agentId: t.agentB1.id }, orgPrincipal(t.orgA))).commands).toEqual([]);
    expect(batches()).toBe(before);
    expect((await reads.take({ orgId: t.orgB, deviceId: t.deviceB1, agentId: t.agentB1.id }, orgPrincipal(t.orgB))).commands.map((c) => c.id)).toEqual([b1]);
  });

  it('reads alone, in the caller’s transaction, when the caller is already in one', async () => {
    const a1 = await queue(t.orgA, t.deviceA1, await actuating(t.orgA, t.siteA1, t.deviceA1), 2);
    const before = batches();
    const [first, second] = await m.as(orgPrincipal(t.orgA), async () => [
      await reads.take({ orgId: t.orgA, deviceId: t.deviceA1, agentId: t.agentA1.id }, orgPrincipal(t.orgA)),
      await reads.take({ orgId: t.orgA, deviceId: t.deviceA2, agentId: t.agentA2.id }, orgPrincipal(t.orgA)),
    ]);
    expect(batches()).toBe(before);
    expect(first.commands.map((c) => c.id)).toEqual([a1]);
    expect(second.commands).toEqual([]);
  });
});
