import { ownerQuery } from '../../support/test-app';
import { expectError, rulesVersion, startPamWorld, type PamWorld } from './pam-e2e.kit';

describe('PAM signer groups API', () => {
  let w: PamWorld;
  let n = 0;
  const name = () => `Vendors ${++n}`;

  beforeAll(async () => {
    w = await startPamWorld();
  }, 60_000);
  afterAll(() => w.close());

  it('creates a group with trimmed, de-duplicated signers keeping the first spelling, audits it and bumps the version', async () => {
    const before = await rulesVersion(w.ids.orgA);
    const res = await w.as.adminA
      .post('/pam/signer-groups', { name: '  Trusted vendors ', description: 'Signed installers we allow', signers: [' Microsoft Corporation', 'Adobe Inc.', 'MICROSOFT CORPORATION', '', 'adobe inc. '] })
      .expect(201);
    expect(res.body).toEqual({
      success: true,
      signerGroup: {
        id: expect.any(String),
        orgId: w.ids.orgA,
        name: 'Trusted vendors',
        description: 'Signed installers we allow',
        signers: ['Microsoft Corporation', 'Adobe Inc.'],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    expect(await rulesVersion(w.ids.orgA)).toBe(before + 1);
    expect(await ownerQuery(`SELECT 1 FROM audit_logs WHERE resource_id = $1 AND action = 'pam_signer_group.create'`, [res.body.signerGroup.id])).toHaveLength(1);
  });

  it('lists the organization groups for devices:read callers', async () => {
    await w.as.adminA.post('/pam/signer-groups', { name: 'Listed group', signers: ['Acme'] }).expect(201);
    const res = await w.as.readerA.get('/pam/signer-groups').expect(200);
    expect(res.body.success).toBe(true);
    expect(res.body.signerGroups.map((g: { name: string }) => g.name)).toContain('Listed group');
    expect(res.body.signerGroups.every((g: { orgId: string }) => g.orgId === w.ids.orgA)).toBe(true);
  });

  it('accepts 500 signers and rejects 501', async () => {
    const signers = Array.from({ length: 501 }, (_, i) => `Signer ${i}`);
    const ok = await w.as.adminA.post('/pam/signer-groups', { name: name(), signers: signers.slice(0, 500) }).expect(201);
    expect(ok.body.signerGroup.signers).toHaveLength(500);
    const res = await w.as.adminA.post('/pam/signer-groups', { name: name(), signers });
    expectError(res, 400, 'validation_failed');
    expect(res.body.details[0].field).toBe('signers');
  });

  it('accepts signers of 255 characters and rejects 256, counting after trimming', async () => {
    await w.as.adminA.post('/pam/signer-groups', { name: name(), signers: [`  ${'s'.repeat(255)}  `] }).expect(201);
    const res = await w.as.adminA.post('/pam/signer-groups', { name: name(), signers: ['s'.repeat(256)] });
    expectError(res, 400, 'validation_failed');
    expect(res.body.details[0].field).toBe('signers');
    expectError(await w.as.adminA.post('/pam/signer-groups', { name: name(), signers: [42] }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/pam/signer-groups', { name: name() }), 400, 'validation_failed');
  });

  it('accepts a 2000-character description and rejects 2001', async () => {
    await w.as.adminA.post('/pam/signer-groups', { name: name(), description: 'd'.repeat(2000), signers: [] }).expect(201);
    const res = await w.as.adminA.post('/pam/signer-groups', { name: name(), description: 'd'.repeat(2001), signers: [] });
    expectError(res, 400, 'validation_failed');
    expect(res.body.details[0].field).toBe('description');
  });

  it('accepts a 255-character name and rejects 256, empty or blank names', async () => {
    await w.as.adminA.post('/pam/signer-groups', { name: 'g'.repeat(255), signers: [] }).expect(201);
    for (const bad of ['g'.repeat(256), '', '  ']) {
      const res = await w.as.adminA.post('/pam/signer-groups', { name: bad, signers: [] });
      expectError(res, 400, 'validation_failed');
      expect(res.body.details[0].field).toBe('name');
    }
  });

  it('answers a duplicate name in the organization, ignoring case, with 409 name_taken, and allows it in another organization', async () => {
    await w.as.adminA.post('/pam/signer-groups', { name: 'Unique Name', signers: [] }).expect(201);
    expectError(await w.as.adminA.post('/pam/signer-groups', { name: 'unique name', signers: [] }), 409, 'name_taken');
    await w.as.adminB.post('/pam/signer-groups', { name: 'Unique Name', signers: [] }).expect(201);
    const { body: other } = await w.as.adminA.post('/pam/signer-groups', { name: 'Other Name', signers: [] }).expect(201);
    expectError(await w.as.adminA.patch(`/pam/signer-groups/${other.signerGroup.id}`, { name: 'UNIQUE NAME' }), 409, 'name_taken');
  });

  it('updates name, description and signers separately, normalising signers, and bumps the version', async () => {
    const { body: created } = await w.as.adminA.post('/pam/signer-groups', { name: name(), description: 'first', signers: ['Acme'] }).expect(201);
    const id = created.signerGroup.id;
    const before = await rulesVersion(w.ids.orgA);
    const renamed = await w.as.adminA.patch(`/pam/signer-groups/${id}`, { name: 'Renamed group' }).expect(200);
    expect(renamed.body.signerGroup).toMatchObject({ name: 'Renamed group', description: 'first', signers: ['Acme'] });
    const updated = await w.as.adminA.patch(`/pam/signer-groups/${id}`, { description: null, signers: ['Contoso ', 'contoso', 'Fabrikam'] }).expect(200);
    expect(updated.body.signerGroup).toMatchObject({ name: 'Renamed group', description: null, signers: ['Contoso', 'Fabrikam'] });
    expect(await rulesVersion(w.ids.orgA)).toBe(before + 2);
    expectError(await w.as.adminA.patch(`/pam/signer-groups/${id}`, { name: null }), 400, 'validation_failed');
    expectError(await w.as.adminA.patch(`/pam/signer-groups/${id}`, { signers: null }), 400, 'validation_failed');
  });

  it('refuses to delete a group still referenced by rules with 409 signer_group_in_use and the rule count', async () => {
    const { body: created } = await w.as.adminA.post('/pam/signer-groups', { name: name(), signers: ['Acme'] }).expect(201);
    const id = created.signerGroup.id;
    const rules = [];
    for (const ruleName of ['uses group 1', 'uses group 2']) {
      rules.push((await w.as.adminA.post('/pam/rules', { name: ruleName, verdict: 'auto_approve', matchSignerGroupId: id }).expect(201)).body.rule.id);
    }
    const res = await w.as.adminA.delete(`/pam/signer-groups/${id}`);
    expectError(res, 409, 'signer_group_in_use');
    expect(res.body.ruleCount).toBe(2);
    for (const ruleId of rules) await w.as.adminA.delete(`/pam/rules/${ruleId}`).expect(200);
    expect((await w.as.adminA.delete(`/pam/signer-groups/${id}`).expect(200)).body).toEqual({ success: true });
    expect(await ownerQuery(`SELECT 1 FROM pam_signer_groups WHERE id = $1`, [id])).toEqual([]);
    expectError(await w.as.adminA.delete(`/pam/signer-groups/${id}`), 404, 'not_found');
  });

  it('requires devices:write and MFA for writes, devices:read for reads', async () => {
    const { body: created } = await w.as.adminA.post('/pam/signer-groups', { name: name(), signers: [] }).expect(201);
    const id = created.signerGroup.id;
    const res = await w.as.readerA.post('/pam/signer-groups', { name: name(), signers: [] });
    expectError(res, 403, 'forbidden');
    expect(res.body.permission).toBe('devices:write');
    expectError(await w.as.readerA.patch(`/pam/signer-groups/${id}`, { name: 'x' }), 403, 'forbidden');
    expectError(await w.as.adminANoMfa.post('/pam/signer-groups', { name: name(), signers: [] }), 403, 'mfa_required');
    expectError(await w.as.adminANoMfa.patch(`/pam/signer-groups/${id}`, { name: 'x' }), 403, 'mfa_required');
    expectError(await w.as.adminANoMfa.delete(`/pam/signer-groups/${id}`), 403, 'mfa_required');
    await w.as.adminANoMfa.get('/pam/signer-groups').expect(200);
  });

  it('lets a site-restricted caller read groups but not write them, since a group reaches every site', async () => {
    const { body: created } = await w.as.adminA.post('/pam/signer-groups', { name: name(), signers: [] }).expect(201);
    const list = await w.as.siteA1.get('/pam/signer-groups').expect(200);
    expect(list.body.signerGroups.map((g: { id: string }) => g.id)).toContain(created.signerGroup.id);
    expectError(await w.as.siteA1.post('/pam/signer-groups', { name: name(), signers: [] }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.patch(`/pam/signer-groups/${created.signerGroup.id}`, { name: 'x' }), 403, 'site_access_denied');
    expectError(await w.as.siteA1.delete(`/pam/signer-groups/${created.signerGroup.id}`), 403, 'site_access_denied');
  });

  it('answers another organization group id with 404 and keeps tenants apart in lists', async () => {
    const { body: created } = await w.as.adminA.post('/pam/signer-groups', { name: name(), signers: ['Acme'] }).expect(201);
    const id = created.signerGroup.id;
    expectError(await w.as.adminB.patch(`/pam/signer-groups/${id}`, { name: 'stolen' }), 404, 'not_found');
    expectError(await w.as.adminB.delete(`/pam/signer-groups/${id}`), 404, 'not_found');
    const listB = await w.as.adminB.get('/pam/signer-groups').expect(200);
    expect(listB.body.signerGroups.map((g: { id: string }) => g.id)).not.toContain(id);
    expectError(await w.as.adminA.get(`/pam/signer-groups?orgId=${w.ids.orgB}`), 404, 'not_found');
    expectError(await w.as.adminA.patch('/pam/signer-groups/not-a-uuid', { name: 'x' }), 400, 'invalid_id');
  });

  it('requires a partner technician to name the organization of a new group', async () => {
    expectError(await w.as.tech.post('/pam/signer-groups', { name: name(), signers: [] }), 400, 'validation_failed');
    const res = await w.as.tech.post('/pam/signer-groups', { orgId: w.ids.orgB, name: name(), signers: [] }).expect(201);
    expect(res.body.signerGroup.orgId).toBe(w.ids.orgB);
    expectError(await w.as.techA.post('/pam/signer-groups', { orgId: w.ids.orgB, name: name(), signers: [] }), 404, 'not_found');
  });
});
