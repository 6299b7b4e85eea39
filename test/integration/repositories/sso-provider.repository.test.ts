import { randomBytes, randomUUID } from 'node:crypto';
import { DbService } from '../../../src/infra/database/db.service';
import { RoleEntity } from '../../../src/modules/tenancy/roles/role.entity';
import { SsoProviderEntity } from '../../../src/modules/sso/providers/sso-provider.entity';
import { SsoProviderRepository, type NewProvider } from '../../../src/modules/sso/providers/sso-provider.repository';
import { DEFAULT_ATTRIBUTE_MAPPING, type SsoOwner } from '../../../src/modules/sso/providers/sso-provider.types';
import { orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows, insertExchangeCode } from '../../support/medium/tenant-rows';

/**
 * SSO providers as administrators and the sign-in flows read and change them: an organization's for
 * its callers, a partner's for callers reaching the partner (changed only by those reaching all its
 * organizations). Organization A2nd gets four providers with set creation times, two of them tied.
 */
describe('SsoProviderRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: SsoProviderRepository;
  let a2: { oldest: string; tieLow: string; tieHigh: string; newest: string };
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const asAdminA2 = () => orgPrincipal(t.orgA2);
  const asAdminB = () => orgPrincipal(t.orgB, { userId: t.adminB });
  const asTech = () => partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech });
  const asSelectedTech = () => partnerPrincipal(t.partnerP, [t.orgA], { userId: t.tech, partnerWide: false });
  const ofOrg = (orgId: string): SsoOwner => ({ orgId, partnerId: null });

  const newProvider = (owner: SsoOwner, over: Partial<NewProvider> = {}): NewProvider => ({
    id: randomUUID(),
    ...owner,
    type: 'oidc',
    preset: null,
    name: `IdP ${t.label}`,
    issuer: 'https://idp.example',
    clientId: 'client',
    clientSecretSealed: 'sealed-secret',
    authorizationUrl: null,
    tokenUrl: null,
    userInfoUrl: null,
    jwksUrl: null,
    scopes: 'openid email',
    entityId: null,
    ssoUrl: null,
    certificate: null,
    nameIdFormat: null,
    forceAuthn: false,
    attributeMapping: DEFAULT_ATTRIBUTE_MAPPING,
    autoProvision: !owner.partnerId,
    defaultRoleId: null,
    defaultRoleSetBy: null,
    allowedDomains: null,
    enforceSSO: false,
    trustsIdpMfa: false,
    createdBy: null,
    ...over,
  });
  /** A provider arranged through the owner connection. */
  const arrange = async (owner: SsoOwner, over: { status?: string; createdAt?: string; id?: string } = {}) => {
    const id = over.id ?? randomUUID();
    await m.owner.query(
      `INSERT INTO sso_providers (id, org_id, partner_id, name, type, status, issuer, client_id, auto_provision, created_at)
       VALUES ($1, $2, $3, 'IdP ' || $4, 'oidc', $5, 'https://idp.example', 'client', $2::uuid IS NOT NULL, coalesce($6::timestamptz, now()))`,
      [id, owner.orgId, owner.partnerId, t.label, over.status ?? 'active', over.createdAt ?? null],
    );
    return id;
  };
  const stored = async (id: string) => (await m.owner.query(`SELECT * FROM sso_providers WHERE id = $1`, [id])).rows[0];

  beforeAll(async () => {
    m = await startMedium([SsoProviderRepository], {}, { entities: [SsoProviderEntity, RoleEntity] });
    repo = m.get(SsoProviderRepository);
    t = await seedTenants(m.owner);
    const [low, high] = [randomUUID(), randomUUID()].sort();
    a2 = {
      oldest: await arrange(ofOrg(t.orgA2), { status: 'inactive', createdAt: '2026-01-01T00:00:00Z' }),
      tieHigh: await arrange(ofOrg(t.orgA2), { id: high, createdAt: '2026-01-02T00:00:00Z' }),
      tieLow: await arrange(ofOrg(t.orgA2), { id: low, createdAt: '2026-01-02T00:00:00Z' }),
      newest: await arrange(ofOrg(t.orgA2), { status: 'testing', createdAt: '2026-01-03T00:00:00Z' }),
    };
  });
  afterAll(() => m.close());

  describe('insert', () => {
    it('creates a provider inactive at generation one, with its author, and answers it as stored', async () => {
      const p = newProvider(ofOrg(t.orgA), { createdBy: t.adminA, defaultRoleId: t.roleReaderA, defaultRoleSetBy: t.adminA, allowedDomains: `${t.label}.example` });
      const row = await m.as(asAdminA(), () => repo.insert(p));
      expect(row).toMatchObject({
        id: p.id,
        orgId: t.orgA,
        partnerId: null,
        status: 'inactive',
        generation: 1,
        createdBy: t.adminA,
        updatedBy: t.adminA,
        defaultRoleId: t.roleReaderA,
        attributeMapping: DEFAULT_ATTRIBUTE_MAPPING,
        createdAt: expect.any(Date),
      });
      expect(await stored(p.id)).toMatchObject({ client_secret: 'sealed-secret', default_role_set_by: t.adminA, allowed_domains: `${t.label}.example`, scopes: 'openid email' });
    });

    it('creates a partner’s provider for a caller reaching all its organizations only, and never one that provisions users', async () => {
      const ok = newProvider({ orgId: null, partnerId: t.partnerP });
      expect(await m.as(asTech(), () => repo.insert(ok))).toMatchObject({ id: ok.id, partnerId: t.partnerP, autoProvision: false });
      await expect(m.as(asSelectedTech(), () => repo.insert(newProvider({ orgId: null, partnerId: t.partnerP })))).rejects.toThrow(/partner_wide_write_denied/);
      await expect(m.as(asTech(), () => repo.insert(newProvider({ orgId: null, partnerId: t.partnerP }, { autoProvision: true })))).rejects.toThrow(/check constraint/);
    });

    it('refuses a provider in another tenant’s organization, a default role of another owner, and a second provider with the same id', async () => {
      const theirs = newProvider(ofOrg(t.orgB));
      await expect(m.as(asAdminA(), () => repo.insert(theirs))).rejects.toThrow(/row-level security/);
      expect(await stored(theirs.id)).toBeUndefined();
      await expect(m.as(asAdminA(), () => repo.insert(newProvider(ofOrg(t.orgA), { defaultRoleId: t.roleAdminB })))).rejects.toThrow(/foreign key/);
      const twice = newProvider(ofOrg(t.orgA));
      await m.as(asAdminA(), () => repo.insert(twice));
      await expect(m.as(asAdminA(), () => repo.insert({ ...twice, name: 'again' }))).rejects.toThrow(/duplicate key/);
      expect((await stored(twice.id)).name).toBe(`IdP ${t.label}`);
    });
  });

  describe('list, oldestActive, find and generationOf', () => {
    it('lists an owner’s providers oldest first, ties broken by id', async () => {
      const rows = await m.as(asAdminA2(), () => repo.list(ofOrg(t.orgA2)));
      expect(rows.map((r) => r.id)).toEqual([a2.oldest, a2.tieLow, a2.tieHigh, a2.newest]);
      expect(rows[0]).toMatchObject({ orgId: t.orgA2, status: 'inactive', clientSecretSealed: null });
    });

    it('answers the oldest active provider, ties broken by id, and null when none is active', async () => {
      expect(await m.as(asAdminA2(), () => repo.oldestActive(ofOrg(t.orgA2)))).toMatchObject({ id: a2.tieLow });
      const partnerQ = { orgId: null, partnerId: t.partnerQ } as const;
      expect(await m.system(() => repo.oldestActive(partnerQ))).toBeNull();
      const testing = await arrange(partnerQ, { status: 'testing' });
      expect(await m.system(() => repo.oldestActive(partnerQ))).toBeNull();
      await m.owner.query(`UPDATE sso_providers SET status = 'active' WHERE id = $1`, [testing]);
      expect(await m.system(() => repo.oldestActive(partnerQ))).toMatchObject({ id: testing, partnerId: t.partnerQ });
    });

    it('finds a provider and its generation, and null for a missing one', async () => {
      expect(await m.as(asAdminA2(), () => repo.find(a2.newest))).toMatchObject({ id: a2.newest, status: 'testing', generation: 1 });
      expect(await m.as(asAdminA2(), () => repo.generationOf(a2.newest))).toEqual({ generation: 1, status: 'testing' });
      expect(await m.as(asAdminA2(), () => repo.find(randomUUID()))).toBeNull();
      expect(await m.as(asAdminA2(), () => repo.generationOf(randomUUID()))).toBeNull();
    });

    it('makes a change wait for the transaction that found the provider for update', async () => {
      const db = m.get(DbService);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let locked!: (pid: number) => void;
      const holder = new Promise<number>((resolve) => (locked = resolve));
      const first = m.as(asAdminA2(), async () => {
        await repo.find(a2.newest, { forUpdate: true });
        locked((await db.one<{ pid: number }>(`SELECT pg_backend_pid() AS pid`))!.pid);
        await gate;
      });
      const pid = await holder;
      const second = m.as(asAdminA2(), () => repo.setStatus(a2.newest, 'inactive', null));
      for (;;) {
        const { rows } = await m.owner.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))`, [pid]);
        if (rows.length) break;
        await new Promise((r) => setImmediate(r));
      }
      expect((await stored(a2.newest)).status).toBe('testing');
      release();
      await first;
      expect(await second).toMatchObject({ status: 'inactive', generation: 2 });
      await m.owner.query(`UPDATE sso_providers SET status = 'testing', generation = 1 WHERE id = $1`, [a2.newest]);
    });

    it('shows nothing of another tenant’s providers, and a partner’s to the partner’s callers only', async () => {
      expect(await m.as(asAdminB(), () => repo.list(ofOrg(t.orgA2)))).toEqual([]);
      expect(await m.as(asAdminB(), () => repo.oldestActive(ofOrg(t.orgA2)))).toBeNull();
      expect(await m.as(asAdminB(), () => repo.find(a2.tieLow))).toBeNull();
      expect(await m.as(asAdminB(), () => repo.generationOf(a2.tieLow))).toBeNull();
      const partnerOwned = await arrange({ orgId: null, partnerId: t.partnerP }, { status: 'inactive' });
      expect((await m.as(asSelectedTech(), () => repo.list({ orgId: null, partnerId: t.partnerP }))).map((p) => p.id)).toContain(partnerOwned);
      expect(await m.as(asAdminB(), () => repo.list({ orgId: null, partnerId: t.partnerP }))).toEqual([]);
    });
  });

  describe('update and setStatus', () => {
    it('writes the patch and bumps the generation when the provider is at the expected one, and nothing otherwise', async () => {
      const id = await arrange(ofOrg(t.orgA));
      const row = await m.as(asAdminA(), () => repo.update(id, 1, { name: 'Renamed', clientSecretSealed: null, scopes: undefined, defaultRoleId: t.roleReaderA }, t.adminA));
      expect(row).toMatchObject({ id, name: 'Renamed', clientSecretSealed: null, scopes: null, defaultRoleId: t.roleReaderA, generation: 2, updatedBy: t.adminA });
      expect(await m.as(asAdminA(), () => repo.update(id, 1, { name: 'Stale' }, t.adminA))).toBeNull();
      expect(await stored(id)).toMatchObject({ name: 'Renamed', generation: 2, issuer: 'https://idp.example' });
      expect(await m.as(asAdminA(), () => repo.update(randomUUID(), 1, { name: 'Nobody' }, t.adminA))).toBeNull();
    });

    it('writes only the configuration a patch may change, whatever else it carries', async () => {
      const id = await arrange(ofOrg(t.orgA), { status: 'inactive' });
      const patch = { name: 'Patched', status: 'active', orgId: t.orgB, type: 'saml', generation: 99, createdBy: t.adminB } as never;
      expect(await m.as(asAdminA(), () => repo.update(id, 1, patch, t.adminA))).toMatchObject({ name: 'Patched', status: 'inactive', orgId: t.orgA, type: 'oidc', generation: 2 });
      expect(await stored(id)).toMatchObject({ status: 'inactive', org_id: t.orgA, created_by: null });
    });

    it('sets the status with a new generation, and answers null for a missing provider', async () => {
      const id = await arrange(ofOrg(t.orgA), { status: 'inactive' });
      expect(await m.as(asAdminA(), () => repo.setStatus(id, 'active', t.adminA))).toMatchObject({ status: 'active', generation: 2, updatedBy: t.adminA });
      expect(await stored(id)).toMatchObject({ status: 'active', generation: 2 });
      expect(await m.as(asAdminA(), () => repo.setStatus(randomUUID(), 'active', t.adminA))).toBeNull();
    });

    it('changes nothing of another tenant’s provider, nor of a partner’s for a caller reaching only some of its organizations', async () => {
      expect(await m.as(asAdminB(), () => repo.update(a2.tieLow, 1, { name: 'Hijacked' }, t.adminB))).toBeNull();
      expect(await m.as(asAdminB(), () => repo.setStatus(a2.tieLow, 'inactive', t.adminB))).toBeNull();
      expect(await stored(a2.tieLow)).toMatchObject({ name: `IdP ${t.label}`, status: 'active', generation: 1 });
      const partnerOwned = await arrange({ orgId: null, partnerId: t.partnerP }, { status: 'inactive' });
      await expect(m.as(asSelectedTech(), () => repo.setStatus(partnerOwned, 'active', t.tech))).rejects.toThrow(/partner_wide_write_denied/);
      expect((await stored(partnerOwned)).status).toBe('inactive');
    });
  });

  describe('delete', () => {
    it('deletes the provider with its identity links and login round trips, and counts the links', async () => {
      const id = await arrange(ofOrg(t.orgA));
      for (const [user, ext] of [
        [t.adminA, 'ext-1'],
        [t.readerA, 'ext-2'],
      ]) {
        await m.owner.query(`INSERT INTO user_sso_identities (org_id, user_id, provider_id, external_id) VALUES ($1, $2, $3, $4)`, [t.orgA, user, id, ext]);
      }
      await m.owner.query(`INSERT INTO sso_sessions (org_id, provider_id, state, nonce, code_verifier, generation, expires_at) VALUES ($1, $2, $3, 'n', 'v', 1, now() + interval '10 minutes')`, [
        t.orgA,
        id,
        randomBytes(16).toString('hex'),
      ]);
      const gone = await m.as(asAdminA(), () => repo.delete(id));
      expect(gone).toEqual({ record: expect.objectContaining({ id, orgId: t.orgA }), identities: 2 });
      expect(await stored(id)).toBeUndefined();
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM user_sso_identities WHERE provider_id = $1`, [id])).rows[0].n).toBe(0);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM sso_sessions WHERE provider_id = $1`, [id])).rows[0].n).toBe(0);
      expect(await m.as(asAdminA(), () => repo.delete(id))).toBeNull();
    });

    it('deletes nothing of another tenant', async () => {
      expect(await m.as(asAdminB(), () => repo.delete(a2.oldest))).toBeNull();
      expect(await stored(a2.oldest)).toBeDefined();
    });
  });

  describe('login sessions and exchange codes', () => {
    it('counts the provider’s login round trips in system context, and none under a tenant’s scope', async () => {
      const id = await arrange(ofOrg(t.orgA));
      for (let i = 0; i < 2; i++) {
        await m.owner.query(`INSERT INTO sso_sessions (org_id, provider_id, state, nonce, code_verifier, generation, expires_at) VALUES ($1, $2, $3, 'n', 'v', 1, now() + interval '10 minutes')`, [
          t.orgA,
          id,
          randomBytes(16).toString('hex'),
        ]);
      }
      expect(await m.system(() => repo.countLoginSessions(id))).toBe(2);
      expect(await m.system(() => repo.countLoginSessions(randomUUID()))).toBe(0);
      expect(await m.as(asAdminA(), () => repo.countLoginSessions(id))).toBe(0);
    });

    it('drops the exchange codes of the given sessions only, nothing for none, and nothing of another tenant', async () => {
      const session = async () =>
        (await m.owner.query<{ id: string }>(`INSERT INTO sessions (user_id, scope, org_id, auth_method, expires_at) VALUES ($1, 'organization', $2, 'password', now() + interval '1 hour') RETURNING id`, [
          t.adminA,
          t.orgA,
        ])).rows[0].id;
      const code = (sessionId: string) => insertExchangeCode(m.owner, t.orgA, t.adminA, sessionId);
      const [ended, kept] = [await session(), await session()];
      await code(ended);
      await code(ended);
      await code(kept);
      const codes = async (sessionId: string) => (await m.owner.query(`SELECT count(*)::int AS n FROM sso_exchange_codes WHERE session_id = $1`, [sessionId])).rows[0].n;
      await m.as(asAdminA(), () => repo.dropExchangeCodes([]));
      await m.as(asAdminB(), () => repo.dropExchangeCodes([ended, kept]));
      expect([await codes(ended), await codes(kept)]).toEqual([2, 1]);
      await m.as(asAdminA(), () => repo.dropExchangeCodes([ended]));
      expect([await codes(ended), await codes(kept)]).toEqual([0, 1]);
    });
  });

  describe('organizations and roles', () => {
    it('sees the caller’s organizations only, and any in system context', async () => {
      expect(await m.as(asAdminA(), () => repo.organizationVisible(t.orgA))).toBe(true);
      expect(await m.as(asAdminA(), () => repo.organizationVisible(t.orgB))).toBe(false);
      expect(await m.as(asAdminA(), () => repo.organizationVisible(randomUUID()))).toBe(false);
      expect(await m.system(() => repo.organizationVisible(t.orgB))).toBe(true);
    });

    it('answers an organization active only while it and its partner are', async () => {
      expect(await m.system(() => repo.organizationActive(t.orgB))).toBe(true);
      expect(await m.as(asAdminA(), () => repo.organizationActive(t.orgB))).toBe(false);
      await m.owner.query(`UPDATE organizations SET status = 'suspended' WHERE id = $1`, [t.orgA2]);
      await m.owner.query(`UPDATE partners SET status = 'suspended' WHERE id = $1`, [t.partnerQ]);
      try {
        expect(await m.system(() => repo.organizationActive(t.orgA2))).toBe(false);
        expect(await m.system(() => repo.organizationActive(t.orgB))).toBe(false);
        expect(await m.system(() => repo.organizationActive(t.orgA))).toBe(true);
      } finally {
        await m.owner.query(`UPDATE organizations SET status = 'active' WHERE id = $1`, [t.orgA2]);
        await m.owner.query(`UPDATE partners SET status = 'active' WHERE id = $1`, [t.partnerQ]);
      }
    });

    it('reads a role of the caller’s tenant, and nothing of another tenant’s', async () => {
      expect(await m.as(asAdminA(), () => repo.role(t.roleReaderA))).toEqual({ id: t.roleReaderA, scope: 'organization', orgId: t.orgA, partnerId: null, permissions: ['devices:read', 'audit:read'] });
      expect(await m.as(asAdminA(), () => repo.role(t.roleAdminB))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.role(randomUUID()))).toBeNull();
    });
  });
});
