import request from 'supertest';
import { expectError, startTenancyWorld, TenancyWorld } from '../tenancy/tenancy-e2e.util';
import { ownerQuery } from '../../support/test-app';

/**
 * Security review, finding 2: a technician limited to selected organizations wrote partner-wide
 * objects, which act on every organization of the partner (including ones he cannot reach), and
 * so took over the partner administrator's sign-in, turned prompts in other organizations into
 * auto-approvals and replaced the public login branding. Each test replays the attack with the
 * fixture's `techA` (orgAccess selected, role `*`, MFA satisfied); `tech` reaches every organization.
 */
describe('partner-wide objects are written only by technicians who reach every organization', () => {
  let w: TenancyWorld;

  beforeAll(async () => {
    w = await startTenancyWorld();
  });
  afterAll(async () => {
    await w.t.close();
  });

  describe('SSO providers', () => {
    it('refuses a selected-organizations technician a partner-owned provider pointing at his own IdP', async () => {
      const res = await w.as.techA.post('/sso/providers', { name: 'Rogue partner IdP', type: 'saml', ownerScope: 'partner', trustsIdpMfa: true });
      expectError(res, 403, 'forbidden');
      expect(await ownerQuery(`SELECT 1 FROM sso_providers WHERE partner_id = $1 AND name = 'Rogue partner IdP'`, [w.ids.partner])).toEqual([]);
    });

    it("refuses him to activate, reconfigure or delete the administrator's partner provider, which stays as it was", async () => {
      const provider = (await w.as.tech.post('/sso/providers', { name: 'Partner IdP', type: 'saml', ownerScope: 'partner' }).expect(201)).body.provider;
      expectError(await w.as.techA.post(`/sso/providers/${provider.id}/status`, { status: 'active' }), 403, 'forbidden');
      expectError(await w.as.techA.patch(`/sso/providers/${provider.id}`, { trustsIdpMfa: true }), 403, 'forbidden');
      expectError(await w.as.techA.delete(`/sso/providers/${provider.id}`), 403, 'forbidden');
      const [row] = await ownerQuery<{ status: string; trusts_idp_mfa: boolean }>(`SELECT status, trusts_idp_mfa FROM sso_providers WHERE id = $1`, [provider.id]);
      expect(row).toEqual({ status: provider.status, trusts_idp_mfa: false });
    });

    it('still lets him manage a provider of an organization he reaches', async () => {
      await w.as.techA.post('/sso/providers', { name: 'Org A IdP', type: 'saml', ownerScope: 'organization', orgId: w.ids.orgA }).expect(201);
    });
  });

  describe('policies', () => {
    const allowEverything = { pam: { uacInterceptionEnabled: false }, software: { mode: 'allowlist', entries: [{ pathGlob: '**' }] } };

    it('refuses him a partner-wide software policy that would auto-approve prompts everywhere', async () => {
      const res = await w.as.techA.post('/policies', { scope: 'partner', type: 'configuration', name: 'Allow all', features: allowEverything });
      expectError(res, 403, 'forbidden');
    });

    it("refuses him to assign, change or delete the administrator's partner policy at partner level", async () => {
      const policy = (await w.as.tech.post('/policies', { scope: 'partner', type: 'configuration', name: 'Baseline', features: { agent: { autoUpdate: true } } }).expect(201))
        .body.policy;
      expectError(await w.as.techA.post(`/policies/${policy.id}/assignments`, { targetType: 'partner', targetId: w.ids.partner }), 403, 'forbidden');
      expectError(await w.as.techA.patch(`/policies/${policy.id}`, { features: allowEverything }), 403, 'forbidden');
      expectError(await w.as.techA.delete(`/policies/${policy.id}`), 403, 'forbidden');
      const [row] = await ownerQuery<{ features: object }>(`SELECT features FROM policies WHERE id = $1`, [policy.id]);
      expect(row.features).toEqual({ agent: { autoUpdate: true } });
    });
  });

  it('refuses him to replace the public login branding', async () => {
    await request(w.t.http).put('/api/v1/partners/me/login-branding').set('Authorization', `Bearer ${await w.t.token(w.ids.tech, { mfa: true })}`).send({ headline: 'Welcome' }).expect(200);
    const res = await request(w.t.http)
      .put('/api/v1/partners/me/login-branding')
      .set('Authorization', `Bearer ${await w.t.token(w.ids.techA, { mfa: true })}`)
      .send({ headline: 'Sign in here', logoUrl: null });
    expectError(res, 403, 'forbidden');
    const [row] = await ownerQuery<{ headline: string }>(`SELECT headline FROM partner_login_branding WHERE partner_id = $1`, [w.ids.partner]);
    expect(row.headline).toBe('Welcome');
  });

  it("neither lists nor revokes the administrator's partner-wide API key, and cannot mint one", async () => {
    const key = (await w.as.tech.post('/api-keys', { name: 'Partner automation', permissions: ['devices:read'] }).expect(201)).body;
    const listed = (await w.as.techA.get('/api-keys').expect(200)).body.apiKeys.map((k: { id: string }) => k.id);
    expect(listed).not.toContain(key.apiKey.id);
    expectError(await w.as.techA.delete(`/api-keys/${key.apiKey.id}`), 404, 'not_found');
    await w.caller(key.key).get(`/devices/${w.ids.deviceB1}`).expect(200);
    expectError(await w.as.techA.post('/api-keys', { name: 'Mine', permissions: ['devices:read'] }), 403, 'privilege_escalation');
  });

  it('refuses him partner-wide scripts and custom fields, and changes to the existing ones', async () => {
    const script = { name: 'Everywhere', category: 'Ops', language: 'powershell', body: 'Write-Host hi', runAs: 'system', availability: 'partner' };
    expectError(await w.as.techA.post('/scripts', script), 403, 'forbidden');
    const own = (await w.as.tech.post('/scripts', { ...script, name: 'Partner script' }).expect(201)).body.script;
    expectError(await w.as.techA.patch(`/scripts/${own.id}`, { body: 'Invoke-Evil' }), 403, 'forbidden');
    expectError(await w.as.techA.delete(`/scripts/${own.id}`), 403, 'forbidden');

    expectError(await w.as.techA.post('/custom-fields', { scope: 'partner', key: 'rogue_field', name: 'Rogue', type: 'text' }), 403, 'forbidden');
    const field = (await w.as.tech.post('/custom-fields', { scope: 'partner', key: 'asset_owner', name: 'Owner', type: 'text' }).expect(201)).body.customField;
    expectError(await w.as.techA.patch(`/custom-fields/${field.id}`, { name: 'Renamed' }), 403, 'forbidden');
    expectError(await w.as.techA.delete(`/custom-fields/${field.id}`), 403, 'forbidden');
  });

  it('refuses him partner roles, which would hand out permissions across the partner', async () => {
    const res = await w.as.techA.post('/roles', { scope: 'partner', name: 'Everything', permissions: ['*'] });
    expectError(res, 403, 'forbidden');
  });

  it('refuses him technicians with all-organization access', async () => {
    const res = await w.as.techA.post('/partner-memberships', { email: 'new-tech@example.com', name: 'New', roleId: w.ids.techRole, orgAccess: 'all' });
    expectError(res, 403, 'privilege_escalation');
  });

  it('still lets the all-organizations technician write every one of these', async () => {
    await w.as.tech.post('/sso/providers', { name: 'Partner IdP 2', type: 'saml', ownerScope: 'partner' }).expect(201);
    await w.as.tech.post('/roles', { scope: 'partner', name: 'Helpdesk', permissions: ['devices:read'] }).expect(201);
    await w.as.tech.post('/custom-fields', { scope: 'partner', key: 'warranty', name: 'Warranty', type: 'text' }).expect(201);
  });
});
