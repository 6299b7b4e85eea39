import { PASSWORD } from '../../factories/tenant.factory';
import { ownerQuery } from '../../support/test-app';
import { Caller, expectError, startTenancyWorld, TenancyWorld } from './tenancy-e2e.util';

describe('roles administration', () => {
  let w: TenancyWorld;
  let manager: Caller;
  beforeAll(async () => {
    w = await startTenancyWorld((f) => ({
      ...f,
      roles: [...f.roles!, { key: 'managerRoleA', scope: 'organization', organization: 'orgA', name: 'Manager', permissions: ['users:*', 'devices:read'] }],
      users: [
        ...f.users!,
        { key: 'managerA', email: `manager@${f.emails.adminA.split('@')[1]}`, password: PASSWORD, memberships: [{ organization: 'orgA', role: 'managerRoleA' }] },
      ],
    }));
    manager = await w.session(w.ids.managerA);
  }, 60_000);
  afterAll(() => w.t.close());

  const roleNames = (body: { roles: { name: string }[] }) => body.roles.map((r) => r.name).sort();

  it('lists the roles of the caller organization only', async () => {
    const res = await w.as.adminA.get('/roles').expect(200);
    expect(res.body.success).toBe(true);
    expect(roleNames(res.body)).toEqual(['Admin', 'Manager', 'Reader']);
    expect(res.body.roles.every((r: { orgId: string; scope: string }) => r.orgId === w.ids.orgA && r.scope === 'organization')).toBe(true);
  });

  it('lists partner roles and the roles of reachable organizations for a technician', async () => {
    const all = await w.as.tech.get('/roles').expect(200);
    expect(all.body.roles.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([w.ids.techRole, w.ids.adminRoleA, w.ids.adminRoleB]));
    const limited = await w.as.techA.get('/roles').expect(200);
    expect(limited.body.roles.map((r: { id: string }) => r.id)).not.toContain(w.ids.adminRoleB);
    const partnerOnly = await w.as.tech.get('/roles?scope=partner').expect(200);
    expect(partnerOnly.body.roles.map((r: { id: string }) => r.id)).toEqual([w.ids.techRole]);
  });

  it('creates an organization role with normalised permissions and audits it', async () => {
    const res = await w.as.adminA.post('/roles', { name: 'Helpdesk', permissions: ['devices:read', 'audit:read', 'devices:execute'] }).expect(201);
    expect(res.body.role).toMatchObject({ scope: 'organization', orgId: w.ids.orgA, partnerId: null, name: 'Helpdesk', permissions: ['audit:read', 'devices:execute', 'devices:read'] });
    const [audit] = await ownerQuery<{ action: string; org_id: string }>(`SELECT action, org_id FROM audit_logs WHERE resource_id = $1`, [res.body.role.id]);
    expect(audit).toEqual({ action: 'role.create', org_id: w.ids.orgA });
  });

  it('creates a partner role only from a partner-scope session', async () => {
    expectError(await w.as.adminA.post('/roles', { scope: 'partner', name: 'Sneaky', permissions: [] }), 403, 'partner_scope_required');
    const res = await w.as.tech.post('/roles', { scope: 'partner', name: 'Junior tech', permissions: ['devices:read'] }).expect(201);
    expect(res.body.role).toMatchObject({ scope: 'partner', orgId: null, partnerId: w.ids.partner });
    const [audit] = await ownerQuery<{ partner_id: string }>(`SELECT partner_id FROM audit_logs WHERE action = 'role.create' AND resource_id = $1`, [res.body.role.id]);
    expect(audit.partner_id).toBe(w.ids.partner);
    expectError(await w.as.adminA.get(`/roles/${res.body.role.id}`), 404, 'not_found');
    expectError(await w.as.tech.post('/roles', { scope: 'partner', orgId: w.ids.orgA, name: 'Mixed', permissions: [] }), 400, 'validation_failed');
  });

  it('refuses to create or widen a role beyond the caller permissions with privilege_escalation', async () => {
    const wide = await manager.post('/roles', { name: 'Too much', permissions: ['devices:write'] });
    expectError(wide, 403, 'privilege_escalation');
    expect(wide.body.permissions).toEqual(['devices:write']);
    expectError(await manager.post('/roles', { name: 'Star', permissions: ['*'] }), 403, 'privilege_escalation');
    expectError(await manager.post('/roles', { name: 'Devices star', permissions: ['devices:*'] }), 403, 'privilege_escalation');
    const ok = await manager.post('/roles', { name: 'Narrow', permissions: ['devices:read', 'users:read'] }).expect(201);
    expectError(await manager.patch(`/roles/${ok.body.role.id}`, { permissions: ['devices:read', 'organizations:write'] }), 403, 'privilege_escalation');
    expect(await ownerQuery(`SELECT name FROM roles WHERE name IN ('Too much', 'Star', 'Devices star')`)).toHaveLength(0);
  });

  it('keeps a role more powerful than the caller out of their hands', async () => {
    expectError(await manager.patch(`/roles/${w.ids.adminRoleA}`, { name: 'Renamed admin' }), 403, 'privilege_escalation');
    expectError(await manager.delete(`/roles/${w.ids.adminRoleA}`), 403, 'privilege_escalation');
    const [row] = await ownerQuery<{ name: string }>(`SELECT name FROM roles WHERE id = $1`, [w.ids.adminRoleA]);
    expect(row.name).toBe('Admin');
  });

  it('updates and deletes a role, auditing both', async () => {
    const created = await w.as.adminA.post('/roles', { name: 'Short lived', permissions: ['devices:read'] }).expect(201);
    const id = created.body.role.id;
    const upd = await w.as.adminA.patch(`/roles/${id}`, { name: 'Renamed', permissions: ['devices:*'] }).expect(200);
    expect(upd.body.role).toMatchObject({ name: 'Renamed', permissions: ['devices:*'] });
    await w.as.adminA.get(`/roles/${id}`).expect(200);
    expect((await w.as.adminA.delete(`/roles/${id}`).expect(200)).body).toEqual({ success: true });
    expectError(await w.as.adminA.get(`/roles/${id}`), 404, 'not_found');
    const audit = await ownerQuery<{ action: string; details: { before?: string[] } }>(
      `SELECT action, details FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`,
      [id],
    );
    expect(audit.map((a) => a.action)).toEqual(['role.create', 'role.update', 'role.delete']);
    expect(audit[1].details.before).toEqual(['devices:read']);
  });

  it('refuses to delete a role still assigned with 409 role_in_use', async () => {
    expectError(await w.as.adminA.delete(`/roles/${w.ids.readerRoleA}`), 409, 'role_in_use');
    expect(await ownerQuery(`SELECT 1 FROM roles WHERE id = $1`, [w.ids.readerRoleA])).toHaveLength(1);
  });

  it('answers a duplicate name, whatever its case, with 409 name_taken', async () => {
    expectError(await w.as.adminA.post('/roles', { name: 'admin', permissions: [] }), 409, 'name_taken');
  });

  it('answers another tenant role id with 404 on every route', async () => {
    expectError(await w.as.adminA.get(`/roles/${w.ids.adminRoleB}`), 404, 'not_found');
    expectError(await w.as.adminA.patch(`/roles/${w.ids.adminRoleB}`, { name: 'Hijacked' }), 404, 'not_found');
    expectError(await w.as.adminA.delete(`/roles/${w.ids.adminRoleB}`), 404, 'not_found');
    expectError(await w.as.adminA.get(`/roles/${w.ids.techRole}`), 404, 'not_found');
    expectError(await w.as.adminA.post('/roles', { orgId: w.ids.orgB, name: 'Planted', permissions: [] }), 404, 'not_found');
    expect(await ownerQuery(`SELECT 1 FROM roles WHERE id = $1 AND name = 'Admin'`, [w.ids.adminRoleB])).toHaveLength(1);
  });

  it('needs users:read to read, users:write with MFA to write', async () => {
    const res = await w.as.readerA.get('/roles');
    expectError(res, 403, 'forbidden');
    expect(res.body.permission).toBe('users:read');
    expectError(await w.as.adminANoMfa.post('/roles', { name: 'No MFA', permissions: [] }), 403, 'mfa_required');
    expectError(await w.as.adminANoMfa.patch(`/roles/${w.ids.readerRoleA}`, { name: 'No MFA' }), 403, 'mfa_required');
    expectError(await w.as.adminANoMfa.delete(`/roles/${w.ids.readerRoleA}`), 403, 'mfa_required');
    await w.as.adminANoMfa.get('/roles').expect(200);
  });

  it('rejects permission strings outside the known set and other bad input with 400', async () => {
    for (const permissions of [['devices:delete'], ['gadgets:read'], ['devices'], ['*:*'], 'devices:read', [42], ['devices:read', 'devices:read']]) {
      const res = await w.as.adminA.post('/roles', { name: 'Bad perms', permissions });
      expectError(res, 400, 'validation_failed');
      expect(res.body.details[0].field).toBe('permissions');
    }
    await w.as.adminA.post('/roles', { name: 'r'.repeat(255), permissions: [] }).expect(201);
    expectError(await w.as.adminA.post('/roles', { name: 'r'.repeat(256), permissions: [] }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/roles', { name: 'Scoped', scope: 'global', permissions: [] }), 400, 'validation_failed');
    expectError(await w.as.adminA.patch(`/roles/${w.ids.readerRoleA}`, { scope: 'partner' }), 400, 'validation_failed');
    expectError(await w.as.adminA.patch(`/roles/${w.ids.readerRoleA}`, { permissions: null }), 400, 'validation_failed');
    expectError(await w.as.adminA.raw('patch', `/roles/${w.ids.readerRoleA}`, '{"name": }'), 400, 'invalid_json');
    expectError(await w.as.adminA.delete('/roles/xyz'), 400, 'invalid_id');
  });

  it('lists partner roles first, then each organization by name without regard to case, and answers roles exactly as stored', async () => {
    await w.as.adminA.post('/roles', { name: 'aardvark', permissions: ['devices:read'] }).expect(201);
    const res = await w.as.tech.get('/roles').expect(200);
    const listed = res.body.roles as { id: string; scope: string; orgId: string | null; name: string }[];
    const byName = (names: string[]) => [...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
    const partnerRoles = listed.filter((r) => r.scope === 'partner');
    expect(listed.slice(0, partnerRoles.length)).toEqual(partnerRoles);
    expect(partnerRoles.map((r) => r.id)).toContain(w.ids.techRole);
    expect(partnerRoles.map((r) => r.name)).toEqual(byName(partnerRoles.map((r) => r.name)));
    const orgA = listed.filter((r) => r.orgId === w.ids.orgA).map((r) => r.name);
    expect(orgA).toEqual(byName(orgA));
    expect(orgA[0]).toBe('aardvark');
    const [row] = await ownerQuery<{ id: string; scope: string; org_id: string | null; partner_id: string | null; name: string; permissions: string[]; created_at: Date; updated_at: Date }>(
      `SELECT * FROM roles WHERE id = $1`,
      [w.ids.readerRoleA],
    );
    expect((await w.as.adminA.get(`/roles/${w.ids.readerRoleA}`).expect(200)).body.role).toEqual({
      id: row.id,
      scope: row.scope,
      orgId: row.org_id,
      partnerId: row.partner_id,
      name: row.name,
      permissions: row.permissions,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    });
  });
});
