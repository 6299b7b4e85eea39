import { randomUUID } from 'node:crypto';
import { DbService } from '../../../src/infra/database/db.service';
import { SignerGroupRepository } from '../../../src/modules/pam/signer-groups/signer-group.repository';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** Signer groups of an organization, the rules that name them, and the lock that keeps both consistent. */
describe('SignerGroupRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: SignerGroupRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminA2 = () => orgPrincipal(t.orgA2);
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const group = (orgId: string, name: string, signers: string[] = ['Contoso Ltd']) => ({ orgId, name, description: null, signers, createdBy: null });
  const arrange = async (orgId: string, name: string) =>
    (await m.owner.query<{ id: string }>(`INSERT INTO pam_signer_groups (org_id, name, signers) VALUES ($1, $2, '{Contoso Ltd}') RETURNING id`, [orgId, name])).rows[0].id;
  const rule = (orgId: string, groupId: string) =>
    m.owner.query(`INSERT INTO pam_rules (org_id, name, verdict, match_signer_group_id) VALUES ($1, 'By group', 'auto_approve', $2)`, [orgId, groupId]);
  const stored = async (id: string) => (await m.owner.query(`SELECT org_id, name, description, signers FROM pam_signer_groups WHERE id = $1`, [id])).rows[0];

  beforeAll(async () => {
    m = await startMedium([SignerGroupRepository]);
    repo = m.get(SignerGroupRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('insert and update', () => {
    it('creates a group with its signers and author', async () => {
      const row = await m.as(asAdminA(), () => repo.insert({ orgId: t.orgA, name: 'Vendors', description: 'Signed installers', signers: ['Contoso Ltd', 'Fabrikam'], createdBy: t.adminA }));
      expect(row).toMatchObject({ id: expect.any(String), org_id: t.orgA, name: 'Vendors', description: 'Signed installers', signers: ['Contoso Ltd', 'Fabrikam'], created_by: t.adminA });
      expect(await stored(row.id)).toEqual({ org_id: t.orgA, name: 'Vendors', description: 'Signed installers', signers: ['Contoso Ltd', 'Fabrikam'] });
    });

    it('refuses a second group of the same name in any case within an organization, but not in another', async () => {
      await m.as(asAdminA(), () => repo.insert(group(t.orgA, 'Drivers')));
      await expect(m.as(asAdminA(), () => repo.insert(group(t.orgA, 'DRIVERS')))).rejects.toThrow(/duplicate key/);
      expect(await m.as(asAdminA2(), () => repo.insert(group(t.orgA2, 'Drivers')))).toMatchObject({ org_id: t.orgA2 });
    });

    it('refuses a blank name and a signer over 255 characters', async () => {
      await expect(m.as(asAdminA(), () => repo.insert(group(t.orgA, '  ')))).rejects.toThrow(/check constraint/);
      await expect(m.as(asAdminA(), () => repo.insert(group(t.orgA, 'Long', ['x'.repeat(256)])))).rejects.toThrow(/check constraint/);
    });

    it('rewrites a group, refuses a name another group holds, and answers null for a missing group', async () => {
      const id = await arrange(t.orgA, 'Before');
      await arrange(t.orgA, 'Taken');
      const row = await m.as(asAdminA(), () => repo.update(id, { name: 'After', description: 'now described', signers: [] }));
      expect(row).toMatchObject({ id, name: 'After', description: 'now described', signers: [] });
      expect(row!.updated_at.getTime()).toBeGreaterThanOrEqual(row!.created_at.getTime());
      await expect(m.as(asAdminA(), () => repo.update(id, { name: 'taken', description: null, signers: [] }))).rejects.toThrow(/duplicate key/);
      expect(await m.as(asAdminA(), () => repo.update(randomUUID(), { name: 'Nobody', description: null, signers: [] }))).toBeNull();
      expect((await stored(id)).name).toBe('After');
    });

    it('neither creates nor changes a group of another tenant', async () => {
      const theirs = await arrange(t.orgB, 'Theirs');
      await expect(m.as(asAdminA(), () => repo.insert(group(t.orgB, 'Planted')))).rejects.toThrow(/row-level security/);
      expect(await m.as(asAdminA(), () => repo.update(theirs, { name: 'Hijacked', description: null, signers: ['Evil'] }))).toBeNull();
      expect(await stored(theirs)).toMatchObject({ name: 'Theirs', signers: ['Contoso Ltd'] });
    });
  });

  describe('list and find', () => {
    let ids: { beta: string; alpha: string; gamma: string; x: string };

    beforeAll(async () => {
      ids = { beta: await arrange(t.orgA2, 'beta'), alpha: await arrange(t.orgA2, 'Alpha'), gamma: await arrange(t.orgA2, 'Gamma'), x: await arrange(t.orgB, 'alpha') };
    });

    it('lists an organization’s groups by name without regard to case', async () => {
      const names = (await m.as(asAdminA2(), () => repo.list(t.orgA2))).map((g) => g.name);
      expect(names.filter((n) => ['Alpha', 'beta', 'Gamma'].includes(n))).toEqual(['Alpha', 'beta', 'Gamma']);
      expect(names.map((n) => n.toLowerCase())).toEqual([...names.map((n) => n.toLowerCase())].sort());
    });

    it('lists every group the caller reaches, organization by organization', async () => {
      const tech = partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
      const rows = await m.as(tech, () => repo.list(null));
      expect(new Set(rows.map((g) => g.org_id))).toEqual(new Set([t.orgA, t.orgA2]));
      const orgs = rows.map((g) => g.org_id);
      expect(orgs).toEqual([...orgs].sort());
    });

    it('finds a group by id, and within its organization only', async () => {
      expect(await m.as(asAdminA2(), () => repo.find(ids.alpha))).toMatchObject({ id: ids.alpha, name: 'Alpha' });
      expect(await m.as(asAdminA2(), () => repo.findInOrg(t.orgA2, ids.alpha))).toMatchObject({ id: ids.alpha });
      const tech = partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
      expect(await m.as(tech, () => repo.findInOrg(t.orgA, ids.alpha))).toBeNull();
      expect(await m.as(asAdminA2(), () => repo.find(randomUUID()))).toBeNull();
    });

    it('shows nothing of another tenant’s groups', async () => {
      expect(await m.as(asAdminB(), () => repo.list(t.orgA2))).toEqual([]);
      expect((await m.as(asAdminB(), () => repo.list(null))).map((g) => g.id)).not.toContain(ids.alpha);
      expect(await m.as(asAdminB(), () => repo.find(ids.alpha))).toBeNull();
      expect(await m.as(asAdminB(), () => repo.findInOrg(t.orgA2, ids.alpha))).toBeNull();
      expect(await m.as(asAdminB(), () => repo.lock(ids.alpha))).toBeNull();
    });
  });

  describe('rules that name a group, lock and delete', () => {
    it('counts the rules of the organization that name the group', async () => {
      const id = await arrange(t.orgA, 'Counted');
      expect(await m.as(asAdminA(), () => repo.referencingRuleCount(t.orgA, id))).toBe(0);
      await rule(t.orgA, id);
      await rule(t.orgA, id);
      expect(await m.as(asAdminA(), () => repo.referencingRuleCount(t.orgA, id))).toBe(2);
      expect(await m.as(asAdminA(), () => repo.referencingRuleCount(t.orgA2, id))).toBe(0);
      expect(await m.as(asAdminB(), () => repo.referencingRuleCount(t.orgA, id))).toBe(0);
    });

    it('deletes a group once, and refuses to delete one a rule names', async () => {
      const id = await arrange(t.orgA, 'Deleted');
      expect(await m.as(asAdminA(), () => repo.delete(id))).toBe(1);
      expect(await stored(id)).toBeUndefined();
      expect(await m.as(asAdminA(), () => repo.delete(id))).toBe(0);
      const named = await arrange(t.orgA, 'Named');
      await rule(t.orgA, named);
      await expect(m.as(asAdminA(), () => repo.delete(named))).rejects.toThrow(/foreign key/);
      expect(await stored(named)).toBeDefined();
    });

    it('deletes nothing of another tenant', async () => {
      const theirs = await arrange(t.orgB, 'Kept');
      expect(await m.as(asAdminA(), () => repo.delete(theirs))).toBe(0);
      expect(await stored(theirs)).toBeDefined();
    });

    it('makes a rule naming the group wait for the lock, and fail once the locking transaction deleted the group', async () => {
      const id = await arrange(t.orgA, 'Locked');
      const db = m.get(DbService);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let locked!: (pid: number) => void;
      const holder = new Promise<number>((resolve) => (locked = resolve));
      const deleting = m.as(asAdminA(), async () => {
        expect(await repo.lock(id)).toMatchObject({ id, name: 'Locked' });
        locked((await db.one<{ pid: number }>(`SELECT pg_backend_pid() AS pid`))!.pid);
        await gate;
        return repo.delete(id);
      });
      const pid = await holder;
      const referencing = m.as(asAdminA(), () => db.exec(`INSERT INTO pam_rules (org_id, name, verdict, match_signer_group_id) VALUES ($1, 'Racing', 'auto_approve', $2)`, [t.orgA, id]));
      const settled = referencing.then(
        () => 'inserted',
        (e: Error) => e.message,
      );
      for (;;) {
        const { rows } = await m.owner.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`, [pid]);
        if (rows.length) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      release();
      expect(await deleting).toBe(1);
      expect(await settled).toMatch(/foreign key/);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM pam_rules WHERE match_signer_group_id = $1`, [id])).rows[0].n).toBe(0);
    });
  });
});
