import { randomUUID } from 'node:crypto';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { AgentPresenceRepository } from '../../../src/modules/tenancy/devices/agent-presence.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * agents.last_seen_at as an instance's flush writes it (system context, agents of every tenant in
 * one statement). Times are compared in the database, against its own now(), never the test's clock.
 */
describe('AgentPresenceRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let presence: AgentPresenceRepository;
  /** How long before the database's now() the agent was last seen, in milliseconds (null: never). */
  const agoMs = async (agentId: string): Promise<number | null> => {
    const { rows } = await m.owner.query<{ ago: number | null }>(`SELECT extract(epoch FROM now() - last_seen_at) * 1000 AS ago FROM agents WHERE id = $1`, [agentId]);
    return rows[0].ago === null ? null : Number(rows[0].ago);
  };
  const lastSeen = async (agentId: string) => (await m.owner.query(`SELECT last_seen_at FROM agents WHERE id = $1`, [agentId])).rows[0].last_seen_at as Date | null;

  beforeAll(async () => {
    m = await startMedium([AgentPresenceRepository]);
    presence = m.get(AgentPresenceRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  it('writes the agents of every tenant in one statement, each at the database’s now less how long ago it was seen', async () => {
    const written = await m.system(() =>
      presence.markSeen(
        [
          { agentId: t.agentA1.id, orgId: t.orgA, agoMs: 3_600_000 },
          { agentId: t.agentB1.id, orgId: t.orgB, agoMs: 0 },
        ],
        1000,
      ),
    );
    expect(written).toBe(2);
    expect(await agoMs(t.agentA1.id)).toBeGreaterThanOrEqual(3_600_000);
    expect(await agoMs(t.agentB1.id)).toBeLessThan(3_600_000);
  });

  it('skips an agent whose stored time is already within the freshness window, and moves one that is older', async () => {
    await m.owner.query(`UPDATE agents SET last_seen_at = now() - interval '10 minutes' WHERE id = $1`, [t.agentA2.id]);
    const before = await lastSeen(t.agentA2.id);
    expect(await m.system(() => presence.markSeen([{ agentId: t.agentA2.id, orgId: t.orgA, agoMs: 9 * 60_000 }], 5 * 60_000))).toBe(0);
    expect(await lastSeen(t.agentA2.id)).toEqual(before);
    expect(await m.system(() => presence.markSeen([{ agentId: t.agentA2.id, orgId: t.orgA, agoMs: 0 }], 5 * 60_000))).toBe(1);
    expect(await agoMs(t.agentA2.id)).toBeLessThan(10 * 60_000);
    // A sighting older than the stored time never moves it back.
    const latest = await lastSeen(t.agentA2.id);
    expect(await m.system(() => presence.markSeen([{ agentId: t.agentA2.id, orgId: t.orgA, agoMs: 60 * 60_000 }], 0))).toBe(0);
    expect(await lastSeen(t.agentA2.id)).toEqual(latest);
  });

  it('writes nothing for no sightings, a revoked agent, an unknown one, or one named under another organization', async () => {
    const revoked = randomUUID();
    const { rows } = await m.owner.query<{ id: string }>(`INSERT INTO devices (org_id, site_id, hostname) VALUES ($1, $2, $3) RETURNING id`, [t.orgA2, t.siteX1, `REVOKED-${t.label}`]);
    await m.owner.query(`INSERT INTO agents (id, org_id, device_id, token_hash, revoked_at) VALUES ($1, $2, $3, $4, now())`, [revoked, t.orgA2, rows[0].id, tokenHash(`revoked-${t.label}`)]);
    expect(await m.system(() => presence.markSeen([], 0))).toBe(0);
    expect(
      await m.system(() =>
        presence.markSeen(
          [
            { agentId: revoked, orgId: t.orgA2, agoMs: 0 },
            { agentId: randomUUID(), orgId: t.orgA, agoMs: 0 },
            { agentId: t.agentA1.id, orgId: t.orgB, agoMs: 0 },
          ],
          0,
        ),
      ),
    ).toBe(0);
    expect(await lastSeen(revoked)).toBeNull();
    expect(await agoMs(t.agentA1.id)).toBeGreaterThanOrEqual(3_600_000);
  });

  it('writes only the caller’s own agents in a tenant transaction', async () => {
    await m.owner.query(`UPDATE agents SET last_seen_at = NULL WHERE id = ANY ($1::uuid[])`, [[t.agentA1.id, t.agentB1.id]]);
    const sightings = [
      { agentId: t.agentA1.id, orgId: t.orgA, agoMs: 0 },
      { agentId: t.agentB1.id, orgId: t.orgB, agoMs: 0 },
    ];
    expect(await m.as(orgPrincipal(t.orgA, { userId: t.adminA }), () => presence.markSeen(sightings, 0))).toBe(1);
    expect(await lastSeen(t.agentB1.id)).toBeNull();
    expect(await lastSeen(t.agentA1.id)).not.toBeNull();
  });
});
