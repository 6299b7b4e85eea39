import { randomBytes, randomUUID } from 'node:crypto';
import { MobileDeviceRepository } from '../../../src/modules/pam/approvals/mobile-device.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** Approvers' phones: rows of their user, which a session sees and changes for its own user only. */
describe('MobileDeviceRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: MobileDeviceRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asReaderA = () => orgPrincipal(t.orgA, { userId: t.readerA });
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const phone = (userId: string, over: { id?: string; platform?: string; hmac?: string } = {}) => ({
    id: over.id ?? randomUUID(),
    userId,
    platform: over.platform ?? 'ios',
    sealedToken: `sealed-${randomBytes(4).toString('hex')}`,
    tokenHmac: over.hmac ?? randomBytes(32).toString('hex'),
  });
  const stored = async (userId: string) =>
    (await m.owner.query(`SELECT id, platform, push_token, push_token_hmac FROM mobile_devices WHERE user_id = $1 ORDER BY created_at, id`, [userId])).rows;

  beforeAll(async () => {
    m = await startMedium([MobileDeviceRepository]);
    repo = m.get(MobileDeviceRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  it('registers a phone, and updates the same row when its user registers the same token again', async () => {
    const first = phone(t.adminA);
    const created = await m.as(asAdminA(), () => repo.upsert(first));
    expect(created).toMatchObject({ id: first.id, platform: 'ios', inserted: true, created_at: expect.any(Date) });
    const again = await m.as(asAdminA(), () => repo.upsert({ ...phone(t.adminA, { platform: 'android', hmac: first.tokenHmac }) }));
    expect(again).toMatchObject({ id: first.id, platform: 'android', inserted: false, created_at: created.created_at });
    expect(again.updated_at.getTime()).toBeGreaterThanOrEqual(created.updated_at.getTime());
    expect(await stored(t.adminA)).toEqual([{ id: first.id, platform: 'android', push_token: first.sealedToken, push_token_hmac: first.tokenHmac }]);
  });

  it('keeps the same token of two users apart', async () => {
    const hmac = randomBytes(32).toString('hex');
    await m.as(asReaderA(), () => repo.upsert(phone(t.readerA, { hmac })));
    expect(await m.as(asAdminB(), () => repo.upsert(phone(t.adminB, { hmac })))).toMatchObject({ inserted: true });
    expect((await m.owner.query(`SELECT count(*)::int AS n FROM mobile_devices WHERE push_token_hmac = $1`, [hmac])).rows[0].n).toBe(2);
  });

  it('lists and counts the user’s phones oldest first', async () => {
    const user = t.siteUserA1;
    const asUser = orgPrincipal(t.orgA, { userId: user, siteIds: [t.siteA1] });
    expect(await m.as(asUser, () => repo.list(user))).toEqual([]);
    expect(await m.as(asUser, () => repo.count(user))).toBe(0);
    const ids = [];
    for (const platform of ['ios', 'android', 'ios']) ids.push((await m.as(asUser, () => repo.upsert(phone(user, { platform })))).id);
    expect((await m.as(asUser, () => repo.list(user))).map((p) => [p.id, p.platform])).toEqual([
      [ids[0], 'ios'],
      [ids[1], 'android'],
      [ids[2], 'ios'],
    ]);
    expect(await m.as(asUser, () => repo.count(user))).toBe(3);
  });

  it('deletes a phone of the user once, and nothing for a missing id', async () => {
    const p = phone(t.adminA);
    await m.as(asAdminA(), () => repo.upsert(p));
    expect(await m.as(asAdminA(), () => repo.delete(t.adminA, p.id))).toBe(1);
    expect(await m.as(asAdminA(), () => repo.delete(t.adminA, p.id))).toBe(0);
    expect(await m.as(asAdminA(), () => repo.delete(t.adminA, randomUUID()))).toBe(0);
    expect((await stored(t.adminA)).map((r) => r.id)).not.toContain(p.id);
  });

  it('shows, counts and changes nothing of another user’s phones, even of the same organization', async () => {
    const p = phone(t.readerA);
    await m.as(asReaderA(), () => repo.upsert(p));
    for (const other of [asAdminA(), asAdminB()]) {
      expect(await m.as(other, () => repo.list(t.readerA))).toEqual([]);
      expect(await m.as(other, () => repo.count(t.readerA))).toBe(0);
      expect(await m.as(other, () => repo.delete(t.readerA, p.id))).toBe(0);
    }
    await expect(m.as(asAdminA(), () => repo.upsert(phone(t.readerA)))).rejects.toThrow(/row-level security/);
    expect((await stored(t.readerA)).map((r) => r.id)).toContain(p.id);
    expect(await m.system(() => repo.count(t.readerA))).toBe((await stored(t.readerA)).length);
  });

  it('does not move a phone to another user by registering its id again', async () => {
    const p = phone(t.adminA);
    await m.as(asAdminA(), () => repo.upsert(p));
    await expect(m.as(asReaderA(), () => repo.upsert({ ...phone(t.readerA), id: p.id }))).rejects.toThrow(/duplicate key/);
    expect((await m.owner.query(`SELECT user_id FROM mobile_devices WHERE id = $1`, [p.id])).rows[0].user_id).toBe(t.adminA);
  });
});
