import request from 'supertest';
import { SecretBoxService } from '../../../src/infra/crypto/secret-box.service';
import { DbService } from '../../../src/infra/database/db.service';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { SsoProviderLookupService } from '../../../src/modules/sso/providers/sso-provider-lookup.service';
import { PASSWORD, tenantFixture } from '../../factories/tenant.factory';
import { TestDnsServer } from '../../support/dns/test-dns-server';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { Api, api, domainOfLength, FakeIssuer, ssoFixture, startFakeIssuer } from './sso-test-kit';

const SECRET = 'top-secret-client-value-7f3a9c';

describe('SSO provider administration', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let idp: FakeIssuer;
  let f: ReturnType<typeof ssoFixture>;
  let ids: Record<string, string>;
  let other: Record<string, string>;
  let adminAToken: string;
  let adminA: Api, adminANoMfa: Api, readerA: Api, ssoAdminA: Api, adminB: Api, tech: Api, techA: Api, otherTech: Api, anonymous: Api;

  /** An OIDC provider of org A that can complete a login (discovery on the loopback IdP). */
  const completeOidc = (extra: object = {}) => ({ name: 'Corp IdP', type: 'oidc', issuer: idp.issuer, clientId: 'client-1', clientSecret: SECRET, ...extra });
  const createOk = async (caller: Api, body: object) => {
    const res = await caller.post('/sso/providers', body);
    expect(res.status).toBe(201);
    return res.body.provider as Record<string, unknown> & { id: string; generation: number };
  };
  const auditOf = (resourceId: string, action: string) =>
    ownerQuery<{ details: Record<string, unknown>; actor_id: string; org_id: string | null; partner_id: string | null }>(
      `SELECT details, actor_id, org_id, partner_id FROM audit_logs WHERE resource_id = $1 AND action = $2 ORDER BY created_at`,
      [resourceId, action],
    );

  beforeAll(async () => {
    dns = new TestDnsServer();
    await dns.start();
    idp = await startFakeIssuer();
    t = await startTestApp({ DNS_SERVERS: dns.address });
    f = ssoFixture();
    ids = await t.seed(f);
    other = await t.seed(tenantFixture());
    const as = async (userId: string, mfa = true) => api(t, await t.token(userId, { mfa }));
    adminAToken = await t.token(ids.adminA, { mfa: true });
    adminA = api(t, adminAToken);
    adminANoMfa = await as(ids.adminA, false);
    readerA = await as(ids.readerA);
    ssoAdminA = await as(ids.ssoAdminA);
    adminB = await as(ids.adminB);
    tech = await as(ids.tech);
    techA = await as(ids.techA);
    otherTech = await as(other.tech);
    anonymous = api(t, null);
  });
  beforeEach(() => idp.serveDefault());
  afterAll(async () => {
    await t.close();
    await idp.close();
    await dns.stop();
  });

  describe('presets', () => {
    it('lists the nine presets of spec 2.8 with their default configuration', async () => {
      const res = await readerA.get('/sso/presets').expect(200);
      expect(res.body.success).toBe(true);
      expect(res.body.presets).toHaveLength(9);
      expect(res.body.presets.find((p: { id: string }) => p.id === 'workforce-identity')).toEqual({
        id: 'workforce-identity',
        name: expect.any(String),
        type: 'oidc',
        parameters: [{ name: 'domain', kind: 'host', description: expect.any(String) }],
        issuer: 'https://{domain}.okta.com',
        scopes: 'openid profile email groups',
        attributeMapping: { email: 'email', name: 'name', firstName: 'given_name', lastName: 'family_name', groups: 'groups' },
      });
    });

    it('needs an authenticated caller', async () => {
      const res = await anonymous.get('/sso/presets').expect(401);
      expect(res.body.code).toBe('unauthenticated');
    });

    it('fills a SAML provider from a preset and its parameters', async () => {
      const provider = await createOk(adminA, { name: 'Federation', type: 'saml', preset: 'federation-server-saml', presetParams: { 'adfs-server': 'STS.Corp.example' } });
      expect(provider).toMatchObject({
        preset: 'federation-server-saml',
        ssoUrl: 'https://sts.corp.example/adfs/ls',
        nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
        attributeMapping: { email: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress' },
        scopes: null,
      });
    });

    it('fills an OIDC issuer from a preset, keeps an explicit attribute mapping, and warns when discovery of it fails', async () => {
      const res = await adminA
        .post('/sso/providers', { name: 'Okta', type: 'oidc', preset: 'workforce-identity', presetParams: { domain: 'acme' }, attributeMapping: { email: 'mail', name: 'displayName' } })
        .expect(201);
      expect(res.body.provider).toMatchObject({ issuer: 'https://acme.okta.com', scopes: 'openid profile email groups', attributeMapping: { email: 'mail', name: 'displayName' }, authorizationUrl: null });
      expect(res.body.warnings).toEqual([{ code: 'discovery_failed', reason: 'endpoint_unavailable', message: expect.any(String) }]);
    });

    it.each([
      ['an unknown preset', { preset: 'nope' }, 'preset'],
      ['a preset of the other protocol', { preset: 'workforce-identity-saml', presetParams: { domain: 'a', appId: 'b' } }, 'preset'],
      ['a missing preset parameter', { preset: 'enterprise-directory' }, 'presetParams.tenant'],
      ['a parameter that would move the host', { preset: 'workforce-identity', presetParams: { domain: 'evil.example/#' } }, 'presetParams.domain'],
      ['presetParams without a preset', { presetParams: { domain: 'acme' } }, 'presetParams'],
    ])('rejects %s with 400 validation_failed', async (_label, extra, field) => {
      const res = await adminA.post('/sso/providers', { name: 'P', type: 'oidc', ...extra }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', details: [expect.objectContaining({ field })] });
    });
  });

  describe('create', () => {
    it('creates an inactive OIDC provider whose endpoints come from discovery, never echoing the secret', async () => {
      const res = await adminA.post('/sso/providers', completeOidc()).expect(201);
      expect(res.body.success).toBe(true);
      expect(res.body.warnings).toBeUndefined();
      expect(res.body.provider).toMatchObject({
        ownerScope: 'organization',
        orgId: ids.orgA,
        partnerId: null,
        status: 'inactive',
        generation: 1,
        issuer: idp.issuer,
        authorizationUrl: `${idp.issuer}/authorize`,
        tokenUrl: `${idp.issuer}/token`,
        userInfoUrl: `${idp.issuer}/userinfo`,
        jwksUrl: `${idp.issuer}/jwks`,
        scopes: 'openid profile email',
        attributeMapping: { email: 'email', name: 'name' },
        autoProvision: true,
        enforceSSO: false,
        trustsIdpMfa: false,
        hasClientSecret: true,
        createdBy: ids.adminA,
      });
      expect(res.body.provider).not.toHaveProperty('clientSecret');
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
      expect(idp.paths).toContain('/.well-known/openid-configuration');
    });

    it('records sso.provider.create with the type and status and no secret', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Audited' }));
      const [row] = await auditOf(provider.id, 'sso.provider.create');
      expect(row).toMatchObject({ actor_id: ids.adminA, org_id: ids.orgA, details: expect.objectContaining({ type: 'oidc', status: 'inactive', discovery: 'succeeded' }) });
      expect(JSON.stringify(row.details)).not.toContain(SECRET);
    });

    it('stores the client secret sealed: the column holds no plaintext and opens only in its own row', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Sealed' }));
      const [row] = await ownerQuery<{ client_secret: string }>(`SELECT client_secret FROM sso_providers WHERE id = $1`, [provider.id]);
      expect(row.client_secret).toMatch(/^enc:v1:/);
      expect(row.client_secret).not.toContain(SECRET);
      expect(row.client_secret).not.toContain(Buffer.from(SECRET).toString('base64'));
      const box = t.app.get(SecretBoxService);
      expect(box.decrypt(row.client_secret, `sso_providers.client_secret:${provider.id}`)).toBe(SECRET);
      expect(() => box.decrypt(row.client_secret, `sso_providers.client_secret:${ids.orgA}`)).toThrow();
    });

    it('infers the organization of an organization-scope caller and refuses another organization as 404', async () => {
      const provider = await createOk(adminA, { name: 'Inferred', type: 'saml' });
      expect(provider.orgId).toBe(ids.orgA);
      const res = await adminA.post('/sso/providers', { name: 'Elsewhere', type: 'saml', orgId: ids.orgB }).expect(404);
      expect(res.body.code).toBe('not_found');
    });

    it('needs orgId from a partner-scope caller creating an organization provider', async () => {
      const res = await tech.post('/sso/providers', { name: 'No org', type: 'saml' }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', details: [{ field: 'orgId', message: expect.any(String) }] });
      const created = await createOk(tech, { name: 'For B', type: 'saml', orgId: ids.orgB });
      expect(created.orgId).toBe(ids.orgB);
    });

    it('refuses a technician an organization outside their access, and another partner organization', async () => {
      expect((await techA.post('/sso/providers', { name: 'B', type: 'saml', orgId: ids.orgB }).expect(404)).body.code).toBe('not_found');
      expect((await tech.post('/sso/providers', { name: 'X', type: 'saml', orgId: other.orgA }).expect(404)).body.code).toBe('not_found');
    });

    it('creates a partner provider only from a partner-scope session, never provisioning users', async () => {
      const res = await adminA.post('/sso/providers', { name: 'Partner', type: 'oidc', ownerScope: 'partner' }).expect(403);
      expect(res.body.code).toBe('partner_scope_required');
      const provider = await createOk(tech, { name: 'Partner IdP', type: 'oidc', ownerScope: 'partner', orgId: ids.orgA });
      expect(provider).toMatchObject({ ownerScope: 'partner', partnerId: ids.partner, orgId: null, autoProvision: false });
      const provisioning = await tech.post('/sso/providers', { name: 'Partner', type: 'oidc', ownerScope: 'partner', autoProvision: true }).expect(400);
      expect(provisioning.body.details).toEqual([expect.objectContaining({ field: 'autoProvision' })]);
    });

    it.each([
      ['without MFA', () => adminANoMfa, 403, 'mfa_required'],
      ['without organizations:write', () => readerA, 403, 'forbidden'],
      ['without a token', () => anonymous, 401, 'unauthenticated'],
    ])('is refused %s', async (_label, caller, status, code) => {
      const res = await caller().post('/sso/providers', { name: 'Denied', type: 'saml' }).expect(status);
      expect(res.body.code).toBe(code);
    });

    it('refuses enforceSSO on a provider that cannot complete a login', async () => {
      const res = await adminA.post('/sso/providers', { name: 'Half', type: 'oidc', issuer: idp.issuer, clientId: 'c', enforceSSO: true }).expect(400);
      expect(res.body).toMatchObject({ code: 'provider_incomplete', missing: ['clientSecret'] });
      await createOk(adminA, completeOidc({ name: 'Complete enforcing', enforceSSO: true }));
    });

    it('rejects fields of the other protocol', async () => {
      const res = await adminA.post('/sso/providers', { name: 'Mixed', type: 'oidc', entityId: 'urn:idp', certificate: 'x' }).expect(400);
      expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(['entityId', 'certificate']);
    });

    it('rejects an unknown property, a missing type and malformed JSON in the contract shape', async () => {
      expect((await adminA.post('/sso/providers', { name: 'X', type: 'oidc', color: 'red' }).expect(400)).body.code).toBe('validation_failed');
      expect((await adminA.post('/sso/providers', { name: 'X' }).expect(400)).body.details).toEqual([expect.objectContaining({ field: 'type' })]);
      const malformed = await request(t.http)
        .post('/api/v1/sso/providers')
        .set('Authorization', `Bearer ${adminAToken}`)
        .set('Content-Type', 'application/json')
        .send('{"name":');
      expect(malformed.status).toBe(400);
      expect(malformed.body.code).toBe('invalid_json');
    });
  });

  describe('limits', () => {
    const base = { type: 'saml' };

    it('accepts a name of 255 characters and rejects 256 and empty', async () => {
      await createOk(adminA, { ...base, name: 'n'.repeat(255) });
      for (const name of ['n'.repeat(256), '']) {
        const res = await adminA.post('/sso/providers', { ...base, name }).expect(400);
        expect(res.body.details).toEqual([expect.objectContaining({ field: 'name' })]);
      }
    });

    it('accepts an issuer of 500 characters and rejects 501', async () => {
      const prefix = 'https://long-issuer.test/';
      const res = await adminA.post('/sso/providers', { name: 'Long', type: 'oidc', issuer: prefix + 'a'.repeat(500 - prefix.length) }).expect(201);
      expect(res.body.provider.issuer).toHaveLength(500);
      const tooLong = await adminA.post('/sso/providers', { name: 'Long', type: 'oidc', issuer: prefix + 'a'.repeat(501 - prefix.length) }).expect(400);
      expect(tooLong.body.details).toEqual([expect.objectContaining({ field: 'issuer' })]);
    });

    it('accepts scopes of 500 characters and rejects 501', async () => {
      const scopes = `openid ${'s'.repeat(493)}`;
      expect(scopes).toHaveLength(500);
      expect((await createOk(adminA, { name: 'Scopes', type: 'oidc', scopes })).scopes).toBe(scopes);
      const res = await adminA.post('/sso/providers', { name: 'Scopes', type: 'oidc', scopes: `${scopes}s` }).expect(400);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'scopes' })]);
    });

    it('requires openid among the scopes', async () => {
      const res = await adminA.post('/sso/providers', { name: 'Scopes', type: 'oidc', scopes: 'profile email' }).expect(400);
      expect(res.body.details).toEqual([{ field: 'scopes', message: 'scopes must include openid' }]);
    });

    it('accepts allowedDomains of 1000 characters and rejects 1001', async () => {
      const domains = [domainOfLength(250, 'a'), domainOfLength(250, 'b'), domainOfLength(250, 'c'), domainOfLength(247, 'd')].join(',');
      expect(domains).toHaveLength(1000);
      expect((await createOk(adminA, { ...base, name: 'Domains', allowedDomains: domains })).allowedDomains).toBe(domains);
      const res = await adminA.post('/sso/providers', { ...base, name: 'Domains', allowedDomains: `${domains}x` }).expect(400);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'allowedDomains' })]);
    });

    it('normalises allowedDomains and rejects an entry that is not a domain', async () => {
      expect((await createOk(adminA, { ...base, name: 'Domains', allowedDomains: 'Corp.Example, https://bücher.example/' })).allowedDomains).toBe(
        'corp.example,xn--bcher-kva.example',
      );
      const res = await adminA.post('/sso/providers', { ...base, name: 'Domains', allowedDomains: 'corp.example,not a domain' }).expect(400);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'allowedDomains' })]);
    });

    it('accepts a client id of 255 characters and rejects 256', async () => {
      await createOk(adminA, { name: 'Client', type: 'oidc', clientId: 'c'.repeat(255) });
      const res = await adminA.post('/sso/providers', { name: 'Client', type: 'oidc', clientId: 'c'.repeat(256) }).expect(400);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'clientId' })]);
    });

    it.each([
      ['without email', { name: 'name' }, 'attributeMapping.email'],
      ['without name', { email: 'email' }, 'attributeMapping.name'],
      ['with an unknown key', { email: 'email', name: 'name', phone: 'tel' }, 'attributeMapping.phone'],
      ['with an empty claim name', { email: '', name: 'name' }, 'attributeMapping.email'],
      ['with a claim name of 256 characters', { email: 'e'.repeat(256), name: 'name' }, 'attributeMapping.email'],
    ])('rejects an attribute mapping %s', async (_label, attributeMapping, field) => {
      const res = await adminA.post('/sso/providers', { ...base, name: 'Mapping', attributeMapping }).expect(400);
      expect(res.body.details.length).toBeGreaterThan(0);
      expect(res.body.details.every((d: { field: string }) => d.field === field)).toBe(true);
    });

    it('accepts a mapping with every key of spec 2.3 and a claim name of 255 characters', async () => {
      const attributeMapping = { email: 'e'.repeat(255), name: 'n', firstName: 'f', lastName: 'l', groups: 'g' };
      expect((await createOk(adminA, { ...base, name: 'Mapping', attributeMapping })).attributeMapping).toEqual(attributeMapping);
    });

    it('rejects a SAML certificate that is not PEM and an SSO URL that is not https', async () => {
      const res = await adminA.post('/sso/providers', { ...base, name: 'SAML', certificate: 'MIIB...', ssoUrl: 'http://idp.example.com/sso' }).expect(400);
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['certificate', 'ssoUrl']);
    });
  });

  describe('default role', () => {
    it('records who configured a default role the caller may grant', async () => {
      const provider = await createOk(ssoAdminA, { name: 'Delegated', type: 'saml', defaultRoleId: ids.orgReadRoleA });
      expect(provider.defaultRoleId).toBe(ids.orgReadRoleA);
      const [row] = await ownerQuery<{ default_role_set_by: string }>(`SELECT default_role_set_by FROM sso_providers WHERE id = $1`, [provider.id]);
      expect(row.default_role_set_by).toBe(ids.ssoAdminA);
    });

    it('refuses a default role granting permissions the caller does not hold', async () => {
      const res = await ssoAdminA.post('/sso/providers', { name: 'Escalate', type: 'saml', defaultRoleId: ids.adminRoleA }).expect(403);
      expect(res.body).toMatchObject({ code: 'privilege_escalation', permissions: ['*'] });
      const reader = await ssoAdminA.post('/sso/providers', { name: 'Escalate', type: 'saml', defaultRoleId: ids.readerRoleA }).expect(403);
      expect([...reader.body.permissions].sort()).toEqual(['audit:read', 'devices:read']);
    });

    it('refuses a role of another organization, a partner role on an organization provider and an unknown role', async () => {
      for (const roleId of [ids.adminRoleB, ids.techRole, '00000000-0000-4000-8000-000000000000']) {
        const res = await tech.post('/sso/providers', { name: 'Role', type: 'saml', orgId: ids.orgA, defaultRoleId: roleId }).expect(400);
        expect(res.body.code).toBe('invalid_default_role');
      }
    });

    it('takes only a partner role of the caller partner on a partner provider', async () => {
      const provider = await createOk(tech, { name: 'Partner role', type: 'saml', ownerScope: 'partner', defaultRoleId: ids.partnerReadRole });
      expect(provider.defaultRoleId).toBe(ids.partnerReadRole);
      for (const roleId of [ids.adminRoleA, other.techRole]) {
        const res = await tech.post('/sso/providers', { name: 'Partner role', type: 'saml', ownerScope: 'partner', defaultRoleId: roleId }).expect(400);
        expect(res.body.code).toBe('invalid_default_role');
      }
    });

    it('re-records the configuring administrator when another one re-saves the same role', async () => {
      const provider = await createOk(ssoAdminA, { name: 'Resave', type: 'saml', defaultRoleId: ids.orgReadRoleA });
      const res = await adminA.patch(`/sso/providers/${provider.id}`, { defaultRoleId: ids.orgReadRoleA }).expect(200);
      expect(res.body.provider.generation).toBe(2);
      const [row] = await ownerQuery<{ default_role_set_by: string }>(`SELECT default_role_set_by FROM sso_providers WHERE id = $1`, [provider.id]);
      expect(row.default_role_set_by).toBe(ids.adminA);
      const [audit] = await auditOf(provider.id, 'sso.provider.update');
      expect(audit.details.changed).toEqual(['defaultRoleId']);
    });
  });

  describe('read', () => {
    let orgAProvider: string;
    let orgBProvider: string;
    let partnerProvider: string;

    beforeAll(async () => {
      orgAProvider = (await createOk(adminA, completeOidc({ name: 'Read A' }))).id;
      orgBProvider = (await createOk(adminB, { name: 'Read B', type: 'saml' })).id;
      partnerProvider = (await createOk(tech, completeOidc({ name: 'Read partner', ownerScope: 'partner' }))).id;
    });

    it('returns a provider with hasClientSecret and without the secret to any member of its organization', async () => {
      const res = await readerA.get(`/sso/providers/${orgAProvider}`).expect(200);
      expect(res.body).toMatchObject({ success: true, provider: { id: orgAProvider, hasClientSecret: true } });
      expect(res.body.provider).not.toHaveProperty('clientSecret');
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
    });

    it("answers 404 for another tenant's provider, whatever the scope", async () => {
      for (const [caller, id] of [
        [adminB, orgAProvider],
        [readerA, partnerProvider],
        [adminA, orgBProvider],
        [techA, orgBProvider],
        [otherTech, partnerProvider],
        [otherTech, orgAProvider],
      ] as const) {
        const res = await caller.get(`/sso/providers/${id}`).expect(404);
        expect(res.body.code).toBe('not_found');
      }
    });

    it('answers 400 invalid_id for a path id that is not a UUID', async () => {
      expect((await adminA.get('/sso/providers/not-a-uuid').expect(400)).body.code).toBe('invalid_id');
    });

    it('lists the providers of the caller organization, oldest first, without secrets', async () => {
      const res = await readerA.get('/sso/providers').expect(200);
      expect(res.body.success).toBe(true);
      const listed = res.body.providers.map((p: { id: string }) => p.id);
      expect(listed).toContain(orgAProvider);
      expect(listed).not.toContain(orgBProvider);
      expect(listed).not.toContain(partnerProvider);
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
      const created = res.body.providers.map((p: { createdAt: string }) => p.createdAt);
      expect([...created].sort()).toEqual(created);
    });

    it('lists an organization by orgId for a technician, and the partner providers with scope=partner', async () => {
      const byOrg = await tech.get(`/sso/providers?orgId=${ids.orgB}`).expect(200);
      expect(byOrg.body.providers.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([orgBProvider]));
      expect(byOrg.body.providers.every((p: { orgId: string }) => p.orgId === ids.orgB)).toBe(true);
      const partner = await techA.get('/sso/providers?scope=partner').expect(200);
      expect(partner.body.providers.map((p: { id: string }) => p.id)).toContain(partnerProvider);
      expect(partner.body.providers.every((p: { ownerScope: string }) => p.ownerScope === 'partner')).toBe(true);
      const otherPartner = await otherTech.get('/sso/providers?scope=partner').expect(200);
      expect(otherPartner.body.providers.map((p: { id: string }) => p.id)).not.toContain(partnerProvider);
    });

    it('refuses scope=partner to an organization session and an inaccessible orgId as 404', async () => {
      expect((await adminA.get('/sso/providers?scope=partner').expect(403)).body.code).toBe('partner_scope_required');
      expect((await adminA.get(`/sso/providers?orgId=${ids.orgB}`).expect(404)).body.code).toBe('not_found');
      expect((await techA.get(`/sso/providers?orgId=${ids.orgB}`).expect(404)).body.code).toBe('not_found');
      expect((await tech.get('/sso/providers').expect(400)).body.details).toEqual([expect.objectContaining({ field: 'orgId' })]);
      expect((await tech.get('/sso/providers?scope=org').expect(400)).body.code).toBe('validation_failed');
    });
  });

  describe('update', () => {
    it('changes a field, bumps the generation once and audits the changed field names only', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Before' }));
      const res = await adminA.patch(`/sso/providers/${provider.id}`, { name: 'After', clientSecret: 'another-secret-value' }).expect(200);
      expect(res.body).toMatchObject({ success: true, provider: { name: 'After', generation: 2, hasClientSecret: true } });
      expect(JSON.stringify(res.body)).not.toContain('another-secret-value');
      const [audit] = await auditOf(provider.id, 'sso.provider.update');
      expect(audit.details).toMatchObject({ changed: ['name', 'clientSecret'], generation: 2 });
      expect(JSON.stringify(audit.details)).not.toContain('another-secret-value');
      expect(JSON.stringify(audit.details)).not.toContain('After');
      const [row] = await ownerQuery<{ client_secret: string }>(`SELECT client_secret FROM sso_providers WHERE id = $1`, [provider.id]);
      expect(t.app.get(SecretBoxService).decrypt(row.client_secret, `sso_providers.client_secret:${provider.id}`)).toBe('another-secret-value');
    });

    it('leaves the generation alone when nothing changes', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Same' }));
      const res = await adminA.patch(`/sso/providers/${provider.id}`, { name: 'Same', scopes: 'openid profile email' }).expect(200);
      expect(res.body.provider.generation).toBe(1);
      expect(await auditOf(provider.id, 'sso.provider.update')).toHaveLength(0);
    });

    it('clears optional fields with null and refuses null for required ones', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Clear', allowedDomains: 'corp.example' }));
      const cleared = await adminA.patch(`/sso/providers/${provider.id}`, { allowedDomains: null, clientSecret: null }).expect(200);
      expect(cleared.body.provider).toMatchObject({ allowedDomains: null, hasClientSecret: false });
      const res = await adminA.patch(`/sso/providers/${provider.id}`, { name: null, attributeMapping: null }).expect(400);
      expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(['name', 'attributeMapping']);
    });

    it('re-runs discovery when the issuer changes and takes the new endpoints', async () => {
      const provider = await createOk(adminA, { name: 'Move', type: 'oidc', issuer: 'https://gone.test' });
      expect(provider.authorizationUrl).toBeNull();
      const res = await adminA.patch(`/sso/providers/${provider.id}`, { issuer: idp.issuer }).expect(200);
      expect(res.body.provider).toMatchObject({ issuer: idp.issuer, tokenUrl: `${idp.issuer}/token`, generation: 2 });
      const [audit] = await auditOf(provider.id, 'sso.provider.update');
      expect(audit.details).toMatchObject({ changed: expect.arrayContaining(['issuer', 'authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl']), discovery: 'succeeded' });
    });

    it('retries discovery when the same issuer is sent again for a provider whose discovery had failed', async () => {
      idp.respond((_req, res) => res.writeHead(503).end());
      const res = await adminA.post('/sso/providers', completeOidc({ name: 'Retry' })).expect(201);
      expect(res.body.warnings).toEqual([expect.objectContaining({ reason: 'http_status' })]);
      idp.serveDefault();
      const retried = await adminA.patch(`/sso/providers/${res.body.provider.id}`, { issuer: idp.issuer }).expect(200);
      expect(retried.body.provider).toMatchObject({ authorizationUrl: `${idp.issuer}/authorize`, jwksUrl: `${idp.issuer}/jwks`, generation: 2 });
      const again = await adminA.patch(`/sso/providers/${res.body.provider.id}`, { issuer: idp.issuer }).expect(200);
      expect(again.body.provider.generation).toBe(2);
    });

    it('changes nothing when discovery of a new issuer fails', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Stay' }));
      const res = await adminA.patch(`/sso/providers/${provider.id}`, { issuer: 'https://nowhere.test', name: 'Renamed' }).expect(400);
      expect(res.body).toMatchObject({ code: 'discovery_failed', reason: 'endpoint_unavailable' });
      const after = await adminA.get(`/sso/providers/${provider.id}`).expect(200);
      expect(after.body.provider).toMatchObject({ issuer: idp.issuer, name: 'Stay', generation: 1 });
    });

    it('refuses owner, protocol and preset changes', async () => {
      const provider = await createOk(adminA, { name: 'Fixed', type: 'saml' });
      for (const body of [{ type: 'oidc' }, { ownerScope: 'partner' }, { orgId: ids.orgB }, { preset: 'workspace-suite-saml' }]) {
        expect((await adminA.patch(`/sso/providers/${provider.id}`, body).expect(400)).body.code).toBe('validation_failed');
      }
    });

    it('is refused without MFA or permission, and answers 404 across tenants', async () => {
      const provider = await createOk(adminA, { name: 'Guarded', type: 'saml' });
      expect((await adminANoMfa.patch(`/sso/providers/${provider.id}`, { name: 'x' }).expect(403)).body.code).toBe('mfa_required');
      expect((await readerA.patch(`/sso/providers/${provider.id}`, { name: 'x' }).expect(403)).body.code).toBe('forbidden');
      expect((await adminB.patch(`/sso/providers/${provider.id}`, { name: 'x' }).expect(404)).body.code).toBe('not_found');
      expect((await otherTech.patch(`/sso/providers/${provider.id}`, { name: 'x' }).expect(404)).body.code).toBe('not_found');
      expect((await adminA.get(`/sso/providers/${provider.id}`).expect(200)).body.provider.name).toBe('Guarded');
    });

    it('rejects a partner provider being switched to provisioning', async () => {
      const provider = await createOk(tech, { name: 'Partner', type: 'saml', ownerScope: 'partner' });
      const res = await tech.patch(`/sso/providers/${provider.id}`, { autoProvision: true }).expect(400);
      expect(res.body.details).toEqual([expect.objectContaining({ field: 'autoProvision' })]);
    });
  });

  describe('status', () => {
    it('activates a complete provider, bumping the generation and auditing the change', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Activate' }));
      const res = await adminA.post(`/sso/providers/${provider.id}/status`, { status: 'active' }).expect(200);
      expect(res.body).toMatchObject({ success: true, provider: { status: 'active', generation: 2, hasClientSecret: true } });
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
      const [audit] = await auditOf(provider.id, 'sso.provider.status.update');
      expect(audit.details).toMatchObject({ from: 'inactive', to: 'active', generation: 2 });
      const back = await adminA.post(`/sso/providers/${provider.id}/status`, { status: 'testing' }).expect(200);
      expect(back.body.provider).toMatchObject({ status: 'testing', generation: 3 });
    });

    it('refuses to activate a provider that cannot complete a login, naming what is missing', async () => {
      const provider = await createOk(adminA, { name: 'Incomplete', type: 'oidc', issuer: idp.issuer });
      const res = await adminA.post(`/sso/providers/${provider.id}/status`, { status: 'active' }).expect(400);
      expect(res.body).toMatchObject({ code: 'provider_incomplete', missing: ['clientId', 'clientSecret'] });
      const saml = await createOk(adminA, { name: 'SAML incomplete', type: 'saml', entityId: 'urn:idp' });
      expect((await adminA.post(`/sso/providers/${saml.id}/status`, { status: 'active' }).expect(400)).body.missing).toEqual(['ssoUrl', 'certificate']);
      expect((await adminA.post(`/sso/providers/${provider.id}/status`, { status: 'testing' }).expect(200)).body.provider.status).toBe('testing');
    });

    it('refuses enforcement on an incomplete provider and any change that would leave an active one incomplete', async () => {
      const incomplete = await createOk(adminA, { name: 'No enforce', type: 'oidc', issuer: idp.issuer });
      expect((await adminA.patch(`/sso/providers/${incomplete.id}`, { enforceSSO: true }).expect(400)).body.code).toBe('provider_incomplete');
      const active = await createOk(adminA, completeOidc({ name: 'Keep complete' }));
      await adminA.post(`/sso/providers/${active.id}/status`, { status: 'active' }).expect(200);
      const res = await adminA.patch(`/sso/providers/${active.id}`, { clientSecret: null }).expect(400);
      expect(res.body).toMatchObject({ code: 'provider_incomplete', missing: ['clientSecret'] });
      expect((await adminA.get(`/sso/providers/${active.id}`).expect(200)).body.provider).toMatchObject({ hasClientSecret: true, generation: 2 });
    });

    it('rejects an unknown status and is refused without MFA, permission or tenancy', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Status guard' }));
      expect((await adminA.post(`/sso/providers/${provider.id}/status`, { status: 'enabled' }).expect(400)).body.code).toBe('validation_failed');
      expect((await adminANoMfa.post(`/sso/providers/${provider.id}/status`, { status: 'active' }).expect(403)).body.code).toBe('mfa_required');
      expect((await readerA.post(`/sso/providers/${provider.id}/status`, { status: 'active' }).expect(403)).body.code).toBe('forbidden');
      expect((await adminB.post(`/sso/providers/${provider.id}/status`, { status: 'active' }).expect(404)).body.code).toBe('not_found');
      expect((await adminA.get(`/sso/providers/${provider.id}`).expect(200)).body.provider.status).toBe('inactive');
    });

    it('makes password login refuse a governed user only while an enforcing provider is active', async () => {
      const fx = ssoFixture();
      const fids = await t.seed(fx);
      const admin = api(t, await t.token(fids.adminA, { mfa: true }));
      const login = () => request(t.http).post('/api/v1/auth/login').send({ email: fx.emails.readerA, password: PASSWORD });
      const provider = await createOk(admin, completeOidc({ name: 'Enforcer', enforceSSO: true }));
      expect((await login()).status).toBe(200);
      await admin.post(`/sso/providers/${provider.id}/status`, { status: 'testing' }).expect(200);
      expect((await login()).status).toBe(200);
      await admin.post(`/sso/providers/${provider.id}/status`, { status: 'active' }).expect(200);
      const refused = await login();
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('invalid_credentials');
    });
  });

  describe('test', () => {
    it('runs discovery against the IdP and reports that the stored endpoints still match', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Testable' }));
      const res = await adminA.post(`/sso/providers/${provider.id}/test`).expect(200);
      expect(res.body).toEqual({
        success: true,
        reachable: true,
        endpointsMatch: true,
        discovered: { issuer: idp.issuer, authorizationUrl: `${idp.issuer}/authorize`, tokenUrl: `${idp.issuer}/token`, userInfoUrl: `${idp.issuer}/userinfo`, jwksUrl: `${idp.issuer}/jwks` },
      });
      const [audit] = await auditOf(provider.id, 'sso.provider.test');
      expect(audit.details).toMatchObject({ type: 'oidc', reachable: true });
    });

    it('reports an IdP whose document changed, and one that does not answer', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Drifted' }));
      idp.serveJson({ ...idp.documentFor(idp.issuer), token_endpoint: `${idp.issuer}/oauth2/token` });
      expect((await adminA.post(`/sso/providers/${provider.id}/test`).expect(200)).body).toMatchObject({ reachable: true, endpointsMatch: false });
      idp.respond((_req, res) => res.writeHead(500).end());
      const down = await adminA.post(`/sso/providers/${provider.id}/test`).expect(200);
      expect(down.body).toEqual({ success: true, reachable: false, error: { reason: 'http_status', message: expect.any(String) } });
      const audits = await auditOf(provider.id, 'sso.provider.test');
      expect(audits[1].details).toMatchObject({ reachable: false, reason: 'http_status' });
    });

    it('checks that the SSO URL of a SAML provider answers, and says when none is configured', async () => {
      const saml = await createOk(adminA, { name: 'SAML test', type: 'saml', ssoUrl: `${idp.issuer}/sso` });
      idp.respond((_req, res) => res.writeHead(302, { location: '/login' }).end());
      expect((await adminA.post(`/sso/providers/${saml.id}/test`).expect(200)).body).toEqual({ success: true, reachable: true });
      const bare = await createOk(adminA, { name: 'SAML bare', type: 'saml' });
      expect((await adminA.post(`/sso/providers/${bare.id}/test`).expect(200)).body).toMatchObject({ reachable: false, error: { reason: 'not_configured' } });
    });

    it('is refused without MFA or permission, and answers 404 across tenants', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Test guard' }));
      expect((await adminANoMfa.post(`/sso/providers/${provider.id}/test`).expect(403)).body.code).toBe('mfa_required');
      expect((await readerA.post(`/sso/providers/${provider.id}/test`).expect(403)).body.code).toBe('forbidden');
      expect((await adminB.post(`/sso/providers/${provider.id}/test`).expect(404)).body.code).toBe('not_found');
    });
  });

  describe('delete', () => {
    const addSessionAndIdentity = async (provider: { id: string; orgId?: unknown; partnerId?: unknown }, generation: number, userId: string) => {
      await ownerQuery(
        `INSERT INTO sso_sessions (org_id, partner_id, provider_id, state, nonce, code_verifier, generation, expires_at)
         VALUES ($1, $2, $3, md5(random()::text), 'n', 'v', $4, now() + interval '10 minutes')`,
        [provider.orgId ?? null, provider.partnerId ?? null, provider.id, generation],
      );
      await ownerQuery(
        `INSERT INTO user_sso_identities (org_id, partner_id, user_id, provider_id, external_id, email) VALUES ($1, $2, $3, $4, md5(random()::text), 'x@example.com')`,
        [provider.orgId ?? null, provider.partnerId ?? null, userId, provider.id],
      );
    };
    const remaining = async (providerId: string) => {
      const [row] = await ownerQuery<{ providers: string; sessions: string; identities: string }>(
        `SELECT (SELECT count(*) FROM sso_providers WHERE id = $1) AS providers,
                (SELECT count(*) FROM sso_sessions WHERE provider_id = $1) AS sessions,
                (SELECT count(*) FROM user_sso_identities WHERE provider_id = $1) AS identities`,
        [providerId],
      );
      return { providers: Number(row.providers), sessions: Number(row.sessions), identities: Number(row.identities) };
    };

    it('removes the provider with its login sessions and identity links, and audits how many went', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Doomed' }));
      await addSessionAndIdentity(provider, 1, ids.readerA);
      expect(await remaining(provider.id)).toEqual({ providers: 1, sessions: 1, identities: 1 });
      expect((await adminA.delete(`/sso/providers/${provider.id}`).expect(200)).body).toEqual({ success: true });
      expect(await remaining(provider.id)).toEqual({ providers: 0, sessions: 0, identities: 0 });
      const [audit] = await auditOf(provider.id, 'sso.provider.delete');
      expect(audit.details).toMatchObject({ type: 'oidc', loginSessionsRemoved: 1, identityLinksRemoved: 1 });
      expect((await adminA.delete(`/sso/providers/${provider.id}`).expect(404)).body.code).toBe('not_found');
    });

    it('removes a partner provider with its rows too', async () => {
      const provider = await createOk(tech, completeOidc({ name: 'Partner doomed', ownerScope: 'partner' }));
      await addSessionAndIdentity(provider, 1, ids.tech);
      await tech.delete(`/sso/providers/${provider.id}`).expect(200);
      expect(await remaining(provider.id)).toEqual({ providers: 0, sessions: 0, identities: 0 });
    });

    it('keeps everything when the caller is refused', async () => {
      const provider = await createOk(adminA, completeOidc({ name: 'Survivor' }));
      await addSessionAndIdentity(provider, 1, ids.readerA);
      expect((await adminANoMfa.delete(`/sso/providers/${provider.id}`).expect(403)).body.code).toBe('mfa_required');
      expect((await readerA.delete(`/sso/providers/${provider.id}`).expect(403)).body.code).toBe('forbidden');
      expect((await adminB.delete(`/sso/providers/${provider.id}`).expect(404)).body.code).toBe('not_found');
      expect((await otherTech.delete(`/sso/providers/${provider.id}`).expect(404)).body.code).toBe('not_found');
      expect(await remaining(provider.id)).toEqual({ providers: 1, sessions: 1, identities: 1 });
    });
  });

  describe('database constraints and row-level security', () => {
    it('refuses a provider with both owners or with neither', async () => {
      await expect(ownerQuery(`INSERT INTO sso_providers (org_id, partner_id, name, type) VALUES ($1, $2, 'both', 'oidc')`, [ids.orgA, ids.partner])).rejects.toThrow(/check/i);
      await expect(ownerQuery(`INSERT INTO sso_providers (name, type) VALUES ('none', 'oidc')`)).rejects.toThrow(/check/i);
    });

    it('hides partner providers from an organization scope and refuses it a write into them', async () => {
      const partnerProvider = await createOk(tech, { name: 'RLS partner', type: 'saml', ownerScope: 'partner' });
      const orgScope = { scope: 'organization' as const, orgIds: [ids.orgA], partnerIds: [], userId: ids.adminA };
      const db = t.app.get(DbService);
      const seen = await t.app.get(TenantTransactionService).run(orgScope, () => db.rows(`SELECT id FROM sso_providers WHERE partner_id = $1`, [ids.partner]));
      expect(seen).toEqual([]);
      const write = t.app
        .get(TenantTransactionService)
        .run(orgScope, () => db.exec(`INSERT INTO sso_providers (partner_id, name, type, auto_provision) VALUES ($1, 'sneaky', 'saml', false)`, [ids.partner]));
      await expect(write).rejects.toThrow(/row-level security/);
      const partnerScope = { scope: 'partner' as const, orgIds: [], partnerIds: [ids.partner], userId: ids.tech };
      const own = await t.app.get(TenantTransactionService).run(partnerScope, () => db.rows<{ id: string }>(`SELECT id FROM sso_providers WHERE id = $1`, [partnerProvider.id]));
      expect(own).toEqual([{ id: partnerProvider.id }]);
    });
  });

  describe('public check and the sign-in lookup', () => {
    it('says SSO is off for an organization without an active provider, and for an unknown one', async () => {
      const fx = await t.seed(tenantFixture());
      expect((await anonymous.get(`/sso/check/${fx.orgA}`).expect(200)).body).toEqual({ ssoEnabled: false });
      expect((await anonymous.get('/sso/check/00000000-0000-4000-8000-000000000000').expect(200)).body).toEqual({ ssoEnabled: false });
      expect((await anonymous.get('/sso/check/nope').expect(400)).body.code).toBe('invalid_id');
    });

    it('names the oldest active provider with its enforcement and login URL', async () => {
      const fx = ssoFixture();
      const fids = await t.seed(fx);
      const admin = api(t, await t.token(fids.adminA, { mfa: true }));
      const inactiveOlder = await createOk(admin, completeOidc({ name: 'Inactive older' }));
      const first = await createOk(admin, completeOidc({ name: 'First active', enforceSSO: true }));
      const second = await createOk(admin, completeOidc({ name: 'Second active' }));
      await admin.post(`/sso/providers/${second.id}/status`, { status: 'active' }).expect(200);
      await admin.post(`/sso/providers/${first.id}/status`, { status: 'active' }).expect(200);
      const res = await anonymous.get(`/sso/check/${fids.orgA}`).expect(200);
      expect(res.body).toEqual({
        ssoEnabled: true,
        provider: { id: first.id, name: 'First active', type: 'oidc' },
        enforceSSO: true,
        loginUrl: `/api/v1/sso/login/${fids.orgA}`,
      });
      expect(JSON.stringify(res.body)).not.toContain(inactiveOlder.id);

      const lookup = t.app.get(SsoProviderLookupService);
      const record = await lookup.oldestActiveForOrg(fids.orgA);
      expect(record).toMatchObject({ id: first.id, generation: 2, status: 'active' });
      expect(lookup.clientSecret(record!)).toBe(SECRET);
      expect(await lookup.currentGeneration(first.id)).toEqual({ generation: 2, status: 'active' });
      expect(await lookup.oldestActiveForOrg(fids.orgB)).toBeNull();
    });

    it('finds the oldest active partner provider for the partner login entry', async () => {
      const fx = ssoFixture();
      const fids = await t.seed(fx);
      const partnerTech = api(t, await t.token(fids.tech, { mfa: true }));
      const provider = await createOk(partnerTech, completeOidc({ name: 'Partner login', ownerScope: 'partner' }));
      const lookup = t.app.get(SsoProviderLookupService);
      expect(await lookup.oldestActiveForPartner(fids.partner)).toBeNull();
      await partnerTech.post(`/sso/providers/${provider.id}/status`, { status: 'active' }).expect(200);
      expect(await lookup.oldestActiveForPartner(fids.partner)).toMatchObject({ id: provider.id, partnerId: fids.partner, autoProvision: false });
      expect((await anonymous.get(`/sso/check/${fids.orgA}`).expect(200)).body).toEqual({ ssoEnabled: false });
    });
  });
});
