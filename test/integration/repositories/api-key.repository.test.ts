import { randomBytes, randomUUID } from 'node:crypto';
import { ApiKeyEntity } from '../../../src/modules/auth/api-keys/api-key.entity';
import { ApiKeyRepository, type NewApiKey } from '../../../src/modules/auth/api-keys/api-key.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * API keys of organizations and, partner-wide, of a partner. Organization A2nd gets three keys
 * created at one instant, so the list's order among equal times is its own (by id).
 */
describe('ApiKeyRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let keys: ApiKeyRepository;
  let tied: string[];
  let partnerKey: string;
  let keyOfB: string;
  const asAdminA = () => ({ ...orgPrincipal(t.orgA, { userId: t.adminA }), actorId: t.adminA });
  const asReaderA = () => ({ ...orgPrincipal(t.orgA, { userId: t.readerA }), actorId: t.readerA });
  const asAdminA2 = () => orgPrincipal(t.orgA2);
  const asTech = (partnerWide = true) => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech, partnerWide });
  const newKey = (over: Partial<NewApiKey> = {}): NewApiKey => ({
    orgId: t.orgA,
    partnerId: null,
    name: 'automation',
    keyPrefix: 'rmm_' + randomBytes(4).toString('hex'),
    keyHash: randomBytes(32).toString('hex'),
    permissions: ['devices:read'],
    mfaSatisfied: false,
    createdBy: t.adminA,
    expiresAt: null,
    ...over,
  });
  const revokedAt = async (id: string) => (await m.owner.query(`SELECT revoked_at FROM api_keys WHERE id = $1`, [id])).rows[0].revoked_at as Date | null;
  const insertAsOwner = async (orgId: string | null, partnerId: string | null, name: string, createdAt = 'now()') =>
    (
      await m.owner.query<{ id: string }>(
        `INSERT INTO api_keys (org_id, partner_id, name, key_prefix, key_hash, created_at) VALUES ($1, $2, $3, 'rmm_x', $4, ${createdAt}) RETURNING id`,
        [orgId, partnerId, name, randomBytes(32).toString('hex')],
      )
    ).rows[0].id;

  beforeAll(async () => {
    m = await startMedium([ApiKeyRepository], {}, { entities: [ApiKeyEntity] });
    keys = m.get(ApiKeyRepository);
    t = await seedTenants(m.owner);
    const at = `'2026-01-02T03:04:05.678Z'::timestamptz`;
    tied = [await insertAsOwner(t.orgA2, null, 'tied 1', at), await insertAsOwner(t.orgA2, null, 'tied 2', at), await insertAsOwner(t.orgA2, null, 'tied 3', at)].sort();
    partnerKey = await insertAsOwner(null, t.partnerP, 'partner wide');
    keyOfB = await insertAsOwner(t.orgB, null, 'of b');
  });
  afterAll(() => m.close());

  describe('list and find', () => {
    it('lists an organization’s keys newest first, and keys of one instant by id', async () => {
      const newer = await insertAsOwner(t.orgA2, null, 'newer', `'2026-02-01T00:00:00Z'::timestamptz`);
      expect((await m.as(asAdminA2(), () => keys.list(t.orgA2))).map((k) => k.id)).toEqual([newer, ...tied]);
      expect((await m.as(asAdminA2(), () => keys.list(undefined))).map((k) => k.id)).toEqual([newer, ...tied]);
    });

    it('shows a partner-wide key only to a partner-wide caller, and never the hash', async () => {
      const wide = (await m.as(asTech(), () => keys.list(undefined))).map((k) => k.id);
      expect(wide).toContain(partnerKey);
      expect(wide).toEqual(expect.arrayContaining(tied));
      expect((await m.as(asTech(false), () => keys.list(undefined))).map((k) => k.id)).not.toContain(partnerKey);
      expect(await m.as(asTech(false), () => keys.find(partnerKey))).toBeNull();
      const found = await m.as(asTech(), () => keys.find(partnerKey));
      expect(found).toMatchObject({ id: partnerKey, partnerId: t.partnerP, orgId: null, name: 'partner wide' });
      expect(found!.keyHash).toBeUndefined();
    });

    it('shows nothing of another tenant’s keys', async () => {
      expect(await m.as(asAdminA(), () => keys.list(t.orgB))).toEqual([]);
      expect((await m.as(asAdminA(), () => keys.list(undefined))).map((k) => k.id)).not.toContain(keyOfB);
      expect(await m.as(asAdminA(), () => keys.find(keyOfB))).toBeNull();
      expect(await m.as(asAdminA(), () => keys.find(randomUUID()))).toBeNull();
    });
  });

  describe('insert', () => {
    it('creates a key and answers it with its id and creation time, without the hash', async () => {
      const k = newKey({ permissions: ['devices:read', 'scripts:run'], mfaSatisfied: true, expiresAt: new Date('2030-01-01T00:00:00Z') });
      const created = await m.as(asAdminA(), () => keys.insert(k));
      expect(created).toMatchObject({ id: expect.any(String), createdAt: expect.any(Date), orgId: t.orgA, name: 'automation', revokedAt: null, lastUsedAt: null });
      expect('keyHash' in created).toBe(false);
      expect((await m.owner.query(`SELECT key_hash, permissions, mfa_satisfied, created_by, expires_at FROM api_keys WHERE id = $1`, [created.id])).rows).toEqual([
        { key_hash: k.keyHash, permissions: ['devices:read', 'scripts:run'], mfa_satisfied: true, created_by: t.adminA, expires_at: new Date('2030-01-01T00:00:00Z') },
      ]);
    });

    it('refuses a key whose hash is already stored, and a key of another tenant', async () => {
      const k = newKey();
      await m.as(asAdminA(), () => keys.insert(k));
      await expect(m.as(asAdminA(), () => keys.insert(newKey({ keyHash: k.keyHash })))).rejects.toThrow(/duplicate key/);
      await expect(m.as(asAdminA(), () => keys.insert(newKey({ orgId: t.orgB, name: `planted ${t.label}` })))).rejects.toThrow(/row-level security/);
      await expect(m.as(asAdminA(), () => keys.insert(newKey({ orgId: null, partnerId: t.partnerQ, name: `planted ${t.label}` })))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM api_keys WHERE name = $1`, [`planted ${t.label}`])).rows[0].n).toBe(0);
    });
  });

  describe('revoke', () => {
    it('revokes a key once: a second revocation keeps the first time', async () => {
      const { id } = await m.as(asAdminA(), () => keys.insert(newKey()));
      const revoked = await m.as(asAdminA(), () => keys.revoke(id));
      expect(revoked).toMatchObject({ id, revokedAt: expect.any(Date) });
      const first = await revokedAt(id);
      expect(await m.as(asAdminA(), () => keys.revoke(id))).toMatchObject({ id, revokedAt: first });
      expect(await revokedAt(id)).toEqual(first);
    });

    it('answers null for a key the caller cannot see, and leaves it live', async () => {
      expect(await m.as(asAdminA(), () => keys.revoke(keyOfB))).toBeNull();
      expect(await revokedAt(keyOfB)).toBeNull();
      expect(await m.as(asTech(false), () => keys.revoke(partnerKey))).toBeNull();
      expect(await revokedAt(partnerKey)).toBeNull();
      expect(await m.as(asAdminA(), () => keys.revoke(randomUUID()))).toBeNull();
    });

    it('refuses the revocation of a key created by someone the actor has no authority over', async () => {
      const { id } = await m.as(asAdminA(), () => keys.insert(newKey()));
      await expect(m.as(asReaderA(), () => keys.revoke(id))).rejects.toThrow(/person_out_of_reach/);
      expect(await revokedAt(id)).toBeNull();
      const own = await m.as(asReaderA(), () => keys.insert(newKey({ createdBy: t.readerA })));
      expect(await m.as(asReaderA(), () => keys.revoke(own.id))).toMatchObject({ revokedAt: expect.any(Date) });
    });
  });
});
