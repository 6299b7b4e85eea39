import { PASSWORD } from '../../factories/tenant.factory';
import { ownerQuery } from '../../support/test-app';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { Caller, expectError, startTenancyWorld, TenancyWorld } from './tenancy-e2e.util';

describe('API keys', () => {
  let w: TenancyWorld;
  let keyMaker: Caller;
  beforeAll(async () => {
    w = await startTenancyWorld((f) => ({
      ...f,
      roles: [...f.roles!, { key: 'keyMakerRole', scope: 'organization', organization: 'orgA', name: 'Key maker', permissions: ['organizations:*', 'devices:read'] }],
      users: [
        ...f.users!,
        { key: 'keyMaker', email: `keys@${f.emails.adminA.split('@')[1]}`, password: PASSWORD, memberships: [{ organization: 'orgA', role: 'keyMakerRole' }] },
      ],
    }));
    keyMaker = await w.session(w.ids.keyMaker);
  }, 60_000);
  afterAll(() => w.t.close());

  it('creates an organization key shown once, stored hashed, with its prefix, and audits it', async () => {
    const res = await w.as.adminA.post('/api-keys', { name: 'Monitoring', permissions: ['devices:read'], mfaSatisfied: true }).expect(201);
    expect(res.body).toEqual({
      success: true,
      key: expect.stringMatching(/^sk_[A-Za-z0-9_-]{40,}$/),
      apiKey: expect.objectContaining({ name: 'Monitoring', orgId: w.ids.orgA, partnerId: null, permissions: ['devices:read'], mfaSatisfied: true, createdBy: w.ids.adminA, revokedAt: null, expiresAt: null }),
    });
    expect(res.body.apiKey.prefix).toBe(res.body.key.slice(3, 11));
    const [row] = await ownerQuery<{ key_hash: string }>(`SELECT key_hash FROM api_keys WHERE id = $1`, [res.body.apiKey.id]);
    expect(row.key_hash).toBe(tokenHash(res.body.key));
    const [audit] = await ownerQuery<{ action: string; org_id: string; details: object }>(`SELECT action, org_id, details FROM audit_logs WHERE resource_id = $1`, [
      res.body.apiKey.id,
    ]);
    expect(audit).toMatchObject({ action: 'api_key.create', org_id: w.ids.orgA });
    expect(JSON.stringify(audit.details)).not.toContain(res.body.key);
  });

  it('lists keys without the secret or its hash', async () => {
    const created = await w.as.adminA.post('/api-keys', { name: 'Listed', permissions: ['devices:read'] }).expect(201);
    const res = await w.as.adminA.get('/api-keys').expect(200);
    const listed = res.body.apiKeys.find((k: { id: string }) => k.id === created.body.apiKey.id);
    expect(listed).toEqual(created.body.apiKey);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(created.body.key);
    expect(text).not.toContain(tokenHash(created.body.key));
    expect(text).not.toMatch(/hash/i);
  });

  it('authenticates with the key and limits it to its permissions and organization', async () => {
    const created = await w.as.adminA.post('/api-keys', { name: 'Reader key', permissions: ['devices:read'] }).expect(201);
    const key = w.caller(created.body.key);
    const devices = await key.get('/devices').expect(200);
    expect(devices.body.devices.map((d: { orgId: string }) => d.orgId).every((o: string) => o === w.ids.orgA)).toBe(true);
    expect(devices.body.pagination.total).toBeGreaterThan(0);
    expectError(await key.get(`/devices/${w.ids.deviceB1}`), 404, 'not_found');
    const write = await key.post('/devices', { siteId: w.ids.siteA1, hostname: 'BY-KEY' });
    expectError(write, 403, 'forbidden');
    expect(write.body.permission).toBe('devices:write');
    expectError(await key.get('/sites'), 403, 'forbidden');
    const [used] = await ownerQuery<{ last_used_at: Date | null }>(`SELECT last_used_at FROM api_keys WHERE id = $1`, [created.body.apiKey.id]);
    expect(used.last_used_at).not.toBeNull();
  });

  it('audits writes made with a key as the key', async () => {
    const created = await w.as.adminA.post('/api-keys', { name: 'Writer key', permissions: ['devices:write'] }).expect(201);
    const res = await w.caller(created.body.key).post('/devices', { siteId: w.ids.siteA1, hostname: 'BY-KEY' }).expect(201);
    const [audit] = await ownerQuery<{ actor_type: string; actor_id: string }>(`SELECT actor_type, actor_id FROM audit_logs WHERE resource_id = $1`, [res.body.device.id]);
    expect(audit).toEqual({ actor_type: 'api_key', actor_id: created.body.apiKey.id });
  });

  it('passes MFA-gated routes only when asked for by an MFA-satisfied session, never by default', async () => {
    const plain = await w.as.adminA.post('/api-keys', { name: 'Plain', permissions: ['devices:write'] }).expect(201);
    expect(plain.body.apiKey.mfaSatisfied).toBe(false);
    expectError(await w.caller(plain.body.key).post(`/devices/${w.ids.deviceA1}/enroll`), 403, 'mfa_required');
    const created = await w.as.adminA.post('/api-keys', { name: 'Enroller', permissions: ['devices:write'], mfaSatisfied: true }).expect(201);
    expect(created.body.apiKey.mfaSatisfied).toBe(true);
    await w.caller(created.body.key).post(`/devices/${w.ids.deviceA1}/enroll`).expect(201);
    await ownerQuery(`UPDATE api_keys SET mfa_satisfied = false WHERE id = $1`, [created.body.apiKey.id]);
    expectError(await w.caller(created.body.key).post(`/devices/${w.ids.deviceA1}/enroll`), 403, 'mfa_required');
  });

  it('refuses permissions beyond the creator with privilege_escalation', async () => {
    const res = await keyMaker.post('/api-keys', { name: 'Too wide', permissions: ['devices:read', 'devices:write'] });
    expectError(res, 403, 'privilege_escalation');
    expect(res.body.permissions).toEqual(['devices:write']);
    expectError(await keyMaker.post('/api-keys', { name: 'Star', permissions: ['*'] }), 403, 'privilege_escalation');
    await keyMaker.post('/api-keys', { name: 'Fits', permissions: ['devices:read', 'organizations:read'] }).expect(201);
  });

  it('revokes a key, after which it no longer authenticates', async () => {
    const created = await w.as.adminA.post('/api-keys', { name: 'Revoke me', permissions: ['devices:read'] }).expect(201);
    await w.caller(created.body.key).get('/devices').expect(200);
    const res = await w.as.adminA.delete(`/api-keys/${created.body.apiKey.id}`).expect(200);
    expect(res.body.apiKey.revokedAt).toEqual(expect.any(String));
    expectError(await w.caller(created.body.key).get('/devices'), 401, 'unauthenticated');
    const [audit] = await ownerQuery<{ action: string }>(`SELECT action FROM audit_logs WHERE resource_id = $1 AND action = 'api_key.revoke'`, [created.body.apiKey.id]);
    expect(audit.action).toBe('api_key.revoke');
  });

  it('stops accepting a key past its expiry', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await w.as.adminA.post('/api-keys', { name: 'Expiring', permissions: ['devices:read'], expiresAt }).expect(201);
    expect(created.body.apiKey.expiresAt).toBe(expiresAt);
    await w.caller(created.body.key).get('/devices').expect(200);
    await ownerQuery(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [created.body.apiKey.id]);
    expectError(await w.caller(created.body.key).get('/devices'), 401, 'unauthenticated');
  });

  it('answers another tenant key id with 404 and hides it from lists', async () => {
    const created = await w.as.adminA.post('/api-keys', { name: 'Private', permissions: ['devices:read'] }).expect(201);
    expectError(await w.as.adminB.delete(`/api-keys/${created.body.apiKey.id}`), 404, 'not_found');
    const list = await w.as.adminB.get('/api-keys').expect(200);
    expect(list.body.apiKeys.map((k: { id: string }) => k.id)).not.toContain(created.body.apiKey.id);
    expectError(await w.as.adminA.post('/api-keys', { name: 'Planted', orgId: w.ids.orgB, permissions: ['devices:read'] }), 404, 'not_found');
    await w.caller(created.body.key).get('/devices').expect(200);
  });

  it('creates a partner-wide key for a technician with every organization, not for one limited to some', async () => {
    const res = await w.as.tech.post('/api-keys', { name: 'Partner wide', permissions: ['devices:read'] }).expect(201);
    expect(res.body.apiKey).toMatchObject({ orgId: null, partnerId: w.ids.partner });
    const [audit] = await ownerQuery<{ partner_id: string }>(`SELECT partner_id FROM audit_logs WHERE resource_id = $1`, [res.body.apiKey.id]);
    expect(audit.partner_id).toBe(w.ids.partner);
    await w.caller(res.body.key).get(`/devices/${w.ids.deviceB1}`).expect(200);
    expectError(await w.as.techA.post('/api-keys', { name: 'Wider than me', permissions: ['devices:read'] }), 403, 'privilege_escalation');
    const orgKey = await w.as.techA.post('/api-keys', { name: 'Org A only', orgId: w.ids.orgA, permissions: ['devices:read'] }).expect(201);
    expectError(await w.caller(orgKey.body.key).get(`/devices/${w.ids.deviceB1}`), 404, 'not_found');
    expect((await w.as.adminA.get('/api-keys').expect(200)).body.apiKeys.map((k: { id: string }) => k.id)).not.toContain(res.body.apiKey.id);
  });

  it('refuses keys to site-restricted users and to other keys', async () => {
    expectError(await w.as.siteA1.post('/api-keys', { name: 'Site key', permissions: ['devices:read'] }), 403, 'site_access_denied');
    const admin = await w.as.adminA.post('/api-keys', { name: 'Admin key', permissions: ['*'], mfaSatisfied: true }).expect(201);
    expectError(await w.caller(admin.body.key).post('/api-keys', { name: 'Child', permissions: ['devices:read'] }), 403, 'forbidden');
  });

  it('needs organizations:write, with MFA to create or revoke', async () => {
    const res = await w.as.readerA.get('/api-keys');
    expectError(res, 403, 'forbidden');
    expect(res.body.permission).toBe('organizations:write');
    expectError(await w.as.adminANoMfa.post('/api-keys', { name: 'No MFA', permissions: ['devices:read'] }), 403, 'mfa_required');
    const created = await w.as.adminA.post('/api-keys', { name: 'Keep', permissions: ['devices:read'] }).expect(201);
    expectError(await w.as.adminANoMfa.delete(`/api-keys/${created.body.apiKey.id}`), 403, 'mfa_required');
  });

  it('rejects bad input with 400 in the contract shape', async () => {
    const ok = { name: 'Valid', permissions: ['devices:read'] };
    await w.as.adminA.post('/api-keys', { ...ok, name: 'k'.repeat(255) }).expect(201);
    expectError(await w.as.adminA.post('/api-keys', { ...ok, name: 'k'.repeat(256) }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/api-keys', { ...ok, permissions: [] }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/api-keys', { ...ok, permissions: ['devices:fly'] }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/api-keys', { ...ok, expiresAt: 'tomorrow' }), 400, 'validation_failed');
    const past = await w.as.adminA.post('/api-keys', { ...ok, expiresAt: '2020-01-01T00:00:00Z' });
    expectError(past, 400, 'validation_failed');
    expect(past.body.details).toEqual([expect.objectContaining({ field: 'expiresAt' })]);
    // ISO 8601 week dates pass the format check but name no instant the service can compare and store.
    const weekDate = await w.as.adminA.post('/api-keys', { ...ok, expiresAt: '2099-W01-1' });
    expectError(weekDate, 400, 'validation_failed');
    expect(weekDate.body.details).toEqual([expect.objectContaining({ field: 'expiresAt' })]);
    expectError(await w.as.adminA.post('/api-keys', { ...ok, mfaSatisfied: 'yes' }), 400, 'validation_failed');
    expectError(await w.as.adminA.post('/api-keys', { ...ok, partnerId: w.ids.partner }), 400, 'validation_failed');
    expectError(await w.as.adminA.raw('post', '/api-keys', '{"name":"x","permissions":[}'), 400, 'invalid_json');
    expectError(await w.as.adminA.delete('/api-keys/not-an-id'), 400, 'invalid_id');
  });
});
