import { PamEventRepository, type PamEventRow } from '../../../src/modules/pam/requests/pam-event.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { insertRequest, seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** The transition log of elevation requests: a batch written in one statement, read back in order. */
describe('PamEventRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: PamEventRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });

  beforeAll(async () => {
    m = await startMedium([PamEventRepository]);
    repo = m.get(PamEventRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  const event = (orgId: string, elevationRequestId: string, over: Partial<PamEventRow> = {}): PamEventRow => ({
    orgId,
    elevationRequestId,
    type: 'created',
    fromStatus: null,
    toStatus: 'pending',
    actorType: 'agent',
    actorId: t.agentA1.id,
    details: {},
    ...over,
  });

  it('writes a batch of events, with empty and nested details, and reads a request’s events in the order their transactions wrote them', async () => {
    const id = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA1, deviceId: t.deviceA1 });
    const other = await insertRequest(m.owner, { orgId: t.orgA, siteId: t.siteA2, deviceId: t.deviceA2 });
    // Two transactions, as in production (each transition is its own request): created_at is the
    // transaction's time, so events written in one transaction share it and come back in id order.
    await m.as(orgPrincipal(t.orgA), () => repo.insert([event(t.orgA, id), event(t.orgA, other)]));
    await m.as(asAdminA(), () =>
      repo.insert([
        event(t.orgA, id, { type: 'approved', fromStatus: 'pending', toStatus: 'approved', actorType: 'user', actorId: t.adminA, details: { via: 'console', window: { minutes: 15 }, note: 'it’s "quoted"' } }),
      ]),
    );
    const events = await m.as(asAdminA(), () => repo.forRequest(t.orgA, id));
    expect(events.map((e) => [e.type, e.from_status, e.to_status, e.actor_type, e.actor_id])).toEqual([
      ['created', null, 'pending', 'agent', t.agentA1.id],
      ['approved', 'pending', 'approved', 'user', t.adminA],
    ]);
    expect(events[0].details).toEqual({});
    expect(events[1].details).toEqual({ via: 'console', window: { minutes: 15 }, note: 'it’s "quoted"' });
    expect(events[0].created_at).toBeInstanceOf(Date);
  });

  it('writes nothing for an empty batch', async () => {
    const before = Number((await m.owner.query(`SELECT count(*) FROM pam_elevation_events WHERE org_id = $1`, [t.orgA])).rows[0].count);
    await m.as(asAdminA(), () => repo.insert([]));
    expect(Number((await m.owner.query(`SELECT count(*) FROM pam_elevation_events WHERE org_id = $1`, [t.orgA])).rows[0].count)).toBe(before);
  });

  it('neither reads nor writes the events of another tenant’s request', async () => {
    const theirs = await insertRequest(m.owner, { orgId: t.orgB, siteId: t.siteB1, deviceId: t.deviceB1, status: 'denied' });
    await m.as(orgPrincipal(t.orgB), () => repo.insert([event(t.orgB, theirs, { actorId: t.agentB1.id })]));
    expect(await m.as(asAdminA(), () => repo.forRequest(t.orgB, theirs))).toEqual([]);
    await expect(m.as(asAdminA(), () => repo.insert([event(t.orgB, theirs, { type: 'revoked', toStatus: 'revoked' })]))).rejects.toThrow(/row-level security/);
    expect((await m.owner.query(`SELECT type FROM pam_elevation_events WHERE elevation_request_id = $1`, [theirs])).rows).toEqual([{ type: 'created' }]);
  });
});
