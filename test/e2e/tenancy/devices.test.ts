import { randomUUID } from 'node:crypto';
import { ownerQuery } from '../../support/test-app';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { DeviceRepository } from '../../../src/modules/tenancy/devices/device.repository';
import { expectError, startTenancyWorld, TenancyWorld } from './tenancy-e2e.util';

describe('devices administration and enrollment', () => {
  let w: TenancyWorld;
  beforeAll(async () => {
    w = await startTenancyWorld();
  }, 60_000);
  afterAll(() => w.t.close());

  const hostnames = (body: { devices: { hostname: string }[] }) => body.devices.map((d) => d.hostname).sort();

  it('lists the caller organization devices with pagination', async () => {
    const res = await w.as.adminA.get('/devices').expect(200);
    expect(res.body.success).toBe(true);
    expect(hostnames(res.body)).toEqual([w.f.devices![0].hostname, w.f.devices![1].hostname].sort());
    expect(res.body.pagination).toEqual({ page: 1, limit: 50, total: 2 });
    expect(res.body.devices[0]).toEqual(
      expect.objectContaining({ orgId: w.ids.orgA, status: 'active', agentId: expect.any(String), enrolledAt: expect.any(String) }),
    );
    const page2 = await w.as.adminA.get('/devices?limit=1&page=2').expect(200);
    expect(page2.body.devices).toHaveLength(1);
    expect(page2.body.pagination).toEqual({ page: 2, limit: 1, total: 2 });
  });

  it('filters by organization, site, status and hostname search', async () => {
    expect(hostnames((await w.as.tech.get(`/devices?orgId=${w.ids.orgB}`).expect(200)).body)).toEqual([w.f.devices![2].hostname]);
    expect(hostnames((await w.as.adminA.get(`/devices?siteId=${w.ids.siteA2}`).expect(200)).body)).toEqual([w.f.devices![1].hostname]);
    expect((await w.as.adminA.get('/devices?status=decommissioned').expect(200)).body.devices).toEqual([]);
    const search = w.f.devices![0].hostname.slice(0, 5).toLowerCase();
    expect(hostnames((await w.as.adminA.get(`/devices?search=${encodeURIComponent(search)}`).expect(200)).body)).toEqual([w.f.devices![0].hostname]);
    // LIKE wildcards in the search are literal
    expect((await w.as.adminA.get('/devices?search=%25').expect(200)).body.devices).toEqual([]);
  });

  it('caps the page size at 100', async () => {
    await w.as.adminA.get('/devices?limit=100').expect(200);
    expectError(await w.as.adminA.get('/devices?limit=101'), 400, 'validation_failed');
    expectError(await w.as.adminA.get('/devices?page=0'), 400, 'validation_failed');
    expectError(await w.as.adminA.get('/devices?limit=ten'), 400, 'validation_failed');
    expectError(await w.as.adminA.get('/devices?status=broken'), 400, 'validation_failed');
    expectError(await w.as.adminA.get('/devices?search=a%00b'), 400, 'validation_failed');
    expectError(await w.as.adminA.get('/devices?page=1&page=2'), 400, 'validation_failed');
  });

  it('creates a device in a site of the organization and audits it', async () => {
    const res = await w.as.adminA.post('/devices', { orgId: w.ids.orgA, siteId: w.ids.siteA2, hostname: 'NEW-PC', osType: 'windows' }).expect(201);
    expect(res.body.device).toMatchObject({ orgId: w.ids.orgA, siteId: w.ids.siteA2, hostname: 'NEW-PC', osType: 'windows', status: 'active', agentId: null, enrolledAt: null, lastSeenAt: null });
    const [audit] = await ownerQuery<{ action: string }>(`SELECT action FROM audit_logs WHERE resource_id = $1`, [res.body.device.id]);
    expect(audit.action).toBe('device.create');
    expect((await w.as.adminA.get(`/devices/${res.body.device.id}`).expect(200)).text).toBe(res.text);
    const listed = (await w.as.adminA.get('/devices?search=NEW-PC').expect(200)).body.devices;
    expect(listed).toEqual([res.body.device]);
  });

  it('refuses a site that belongs to another organization or tenant', async () => {
    expectError(await w.as.adminA.post('/devices', { siteId: w.ids.siteB1, hostname: 'X' }), 404, 'not_found');
    expectError(await w.as.tech.post('/devices', { orgId: w.ids.orgA, siteId: w.ids.siteB1, hostname: 'X' }), 404, 'not_found');
    expectError(await w.as.adminA.patch(`/devices/${w.ids.deviceA1}`, { siteId: w.ids.siteB1 }), 404, 'not_found');
  });

  it('updates hostname and site, and decommissioning revokes the agent', async () => {
    const created = await w.as.adminA.post('/devices', { siteId: w.ids.siteA1, hostname: 'MOVE-ME' }).expect(201);
    const id = created.body.device.id;
    const enrolled = await w.as.adminA.post(`/devices/${id}/enroll`).expect(201);
    const moved = await w.as.adminA.patch(`/devices/${id}`, { hostname: 'MOVED', siteId: w.ids.siteA2 }).expect(200);
    expect(moved.body.device).toMatchObject({ hostname: 'MOVED', siteId: w.ids.siteA2, agentId: enrolled.body.agentId });
    const gone = await w.as.adminA.patch(`/devices/${id}`, { status: 'decommissioned' }).expect(200);
    expect(gone.body.device).toMatchObject({ status: 'decommissioned', agentId: null });
    const [agent] = await ownerQuery<{ revoked_at: Date | null }>(`SELECT revoked_at FROM agents WHERE id = $1`, [enrolled.body.agentId]);
    expect(agent.revoked_at).not.toBeNull();
    expectError(await w.as.adminA.post(`/devices/${id}/enroll`), 409, 'device_decommissioned');
  });

  it('enrolls a device with a one-time token stored hashed and revokes the previous agent', async () => {
    const before = (await w.as.adminA.get(`/devices/${w.ids.deviceA2}`).expect(200)).body.device.agentId;
    const res = await w.as.adminA.post(`/devices/${w.ids.deviceA2}/enroll`).expect(201);
    expect(res.body).toEqual({ success: true, agentId: expect.any(String), agentToken: expect.any(String) });
    expect(res.body.agentToken.length).toBeGreaterThanOrEqual(40);
    const agents = await ownerQuery<{ id: string; token_hash: string; revoked_at: Date | null }>(
      `SELECT id, token_hash, revoked_at FROM agents WHERE device_id = $1 ORDER BY created_at`,
      [w.ids.deviceA2],
    );
    expect(agents.find((a) => a.id === before)?.revoked_at).not.toBeNull();
    const fresh = agents.find((a) => a.id === res.body.agentId)!;
    expect(fresh.revoked_at).toBeNull();
    expect(fresh.token_hash).toBe(tokenHash(res.body.agentToken));
    expect(JSON.stringify(agents)).not.toContain(res.body.agentToken);
    const [audit] = await ownerQuery<{ details: Record<string, unknown> }>(
      `SELECT details FROM audit_logs WHERE action = 'device.enroll' AND resource_id = $1`,
      [w.ids.deviceA2],
    );
    expect(audit.details).toMatchObject({ agentId: res.body.agentId, previousAgentsRevoked: 1 });
    expect(JSON.stringify(audit.details)).not.toContain(res.body.agentToken);
    const again = await w.as.adminA.post(`/devices/${w.ids.deviceA2}/enroll`).expect(201);
    expect(again.body.agentToken).not.toBe(res.body.agentToken);
  });

  it('requires MFA to enroll', async () => {
    expectError(await w.as.adminANoMfa.post(`/devices/${w.ids.deviceA1}/enroll`), 403, 'mfa_required');
  });

  it('refuses writes without devices:write', async () => {
    const res = await w.as.readerA.patch(`/devices/${w.ids.deviceA1}`, { hostname: 'X' });
    expectError(res, 403, 'forbidden');
    expect(res.body.permission).toBe('devices:write');
  });

  it('answers another tenant device id with 404 on every route', async () => {
    expectError(await w.as.adminA.get(`/devices/${w.ids.deviceB1}`), 404, 'not_found');
    expectError(await w.as.adminA.patch(`/devices/${w.ids.deviceB1}`, { hostname: 'Hijacked' }), 404, 'not_found');
    expectError(await w.as.adminA.post(`/devices/${w.ids.deviceB1}/enroll`), 404, 'not_found');
    expectError(await w.as.techA.get(`/devices/${w.ids.deviceB1}`), 404, 'not_found');
    const [row] = await ownerQuery<{ hostname: string }>(`SELECT hostname FROM devices WHERE id = $1`, [w.ids.deviceB1]);
    expect(row.hostname).toBe(w.f.devices![2].hostname);
  });

  it('shows a site-restricted user only devices of their site and refuses writes elsewhere', async () => {
    const list = await w.as.siteA1.get('/devices').expect(200);
    expect(list.body.devices.map((d: { siteId: string }) => d.siteId)).toEqual(expect.arrayContaining([w.ids.siteA1]));
    expect(list.body.devices.every((d: { siteId: string }) => d.siteId === w.ids.siteA1)).toBe(true);
    expectError(await w.as.siteA1.get(`/devices/${w.ids.deviceA2}`), 404, 'not_found');
    expectError(await w.as.siteA1.get(`/devices?siteId=${w.ids.siteA2}`), 403, 'site_access_denied');
    expectError(await w.as.siteA1.patch(`/devices/${w.ids.deviceA2}`, { hostname: 'X' }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.post(`/devices/${w.ids.deviceA2}/enroll`), 403, 'site_access_denied');
    expectError(await w.as.siteA1.post('/devices', { siteId: w.ids.siteA2, hostname: 'X' }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.patch(`/devices/${w.ids.deviceA1}`, { siteId: w.ids.siteA2 }), 403, 'site_access_denied');
    await w.as.siteA1.post('/devices', { siteId: w.ids.siteA1, hostname: 'A1-NEW' }).expect(201);
  });

  it('rejects bad input with 400 in the contract shape', async () => {
    await w.as.adminA.post('/devices', { siteId: w.ids.siteA1, hostname: 'h'.repeat(255) }).expect(201);
    expectError(await w.as.adminA.post('/devices', { siteId: w.ids.siteA1, hostname: 'h'.repeat(256) }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/devices', { hostname: 'no-site' }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/devices', { siteId: w.ids.siteA1, hostname: ['x'] }), 400, 'validation_failed');
    expectError(await w.as.adminA.patch(`/devices/${w.ids.deviceA1}`, { status: 'deleted' }), 400, 'validation_failed');
    expectError(await w.as.adminA.patch(`/devices/${w.ids.deviceA1}`, { hostname: null }), 400, 'validation_failed');
    expectError(await w.as.adminA.patch(`/devices/${w.ids.deviceA1}`, { orgId: w.ids.orgB }), 400, 'validation_failed');
    expectError(await w.as.adminA.raw('post', '/devices', '[1,'), 400, 'invalid_json');
    expectError(await w.as.adminA.post('/devices/123/enroll'), 400, 'invalid_id');
  });

  it("gives the entity repository the request's transaction: another organization's devices and agents stay hidden and unwritable, other sites' too", async () => {
    const tx = w.t.app.get(TenantTransactionService);
    const repo = w.t.app.get(DeviceRepository);
    const orgA = { scope: 'organization' as const, orgIds: [w.ids.orgA], partnerIds: [], userId: w.ids.adminA };
    const seen = await tx.run(orgA, async () => ({
      own: await repo.find(w.ids.deviceA1),
      other: await repo.find(w.ids.deviceB1),
      list: await repo.list({ siteIds: null }, { limit: 100, offset: 0 }),
    }));
    expect(seen.own).toMatchObject({ id: w.ids.deviceA1, orgId: w.ids.orgA, agent: { deviceId: w.ids.deviceA1 } });
    expect(seen.other).toBeNull();
    expect(seen.list.rows.length).toBeGreaterThan(0);
    expect(seen.list.rows.every((d) => d.orgId === w.ids.orgA)).toBe(true);
    expect(await tx.run(orgA, () => repo.update(w.ids.deviceB1, { hostname: 'Hijacked' }))).toBe(0);
    expect(await tx.run(orgA, () => repo.revokeAgents(w.ids.orgB, w.ids.deviceB1))).toBe(0);
    await expect(tx.run(orgA, () => repo.insert({ orgId: w.ids.orgB, siteId: w.ids.siteB1, hostname: 'Planted', osType: null }))).rejects.toThrow(/row-level security/);
    await expect(tx.run(orgA, () => repo.insertAgent({ id: randomUUID(), orgId: w.ids.orgB, deviceId: w.ids.deviceB1, tokenHash: 'f'.repeat(64) }))).rejects.toThrow(
      /row-level security/,
    );
    const [row] = await ownerQuery<{ hostname: string; live_agents: string }>(
      `SELECT d.hostname, (SELECT count(*) FROM agents a WHERE a.device_id = d.id AND a.revoked_at IS NULL) AS live_agents FROM devices d WHERE d.id = $1`,
      [w.ids.deviceB1],
    );
    expect(row).toEqual({ hostname: w.f.devices![2].hostname, live_agents: '1' });
    expect(await ownerQuery(`SELECT 1 FROM devices WHERE hostname = 'Planted'`)).toEqual([]);

    const siteA1 = { ...orgA, siteIds: [w.ids.siteA1] };
    expect(await tx.run(siteA1, () => repo.find(w.ids.deviceA2))).toBeNull();
    expect(await tx.run(siteA1, () => repo.update(w.ids.deviceA2, { hostname: 'Hijacked' }))).toBe(0);
  });
});
