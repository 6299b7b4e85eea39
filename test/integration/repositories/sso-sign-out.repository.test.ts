import { randomBytes, randomUUID } from 'node:crypto';
import { SsoSignOutRepository, type NewSessionLink } from '../../../src/modules/sso/login/sso-sign-out.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows, insertExchangeCode } from '../../support/medium/tenant-rows';

/**
 * The sign-out tables: which IdP session each of our sessions came from, and the logout tokens
 * already seen. Both admit system context only (the callback and the back-channel routes have no
 * tenant); a tenant's scope sees and writes nothing of them.
 */
describe('SsoSignOutRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: SsoSignOutRepository;
  let provider: string;
  let otherProvider: string;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });

  const session = async (userId: string, over: { expiresIn?: string; revoked?: boolean } = {}) =>
    (
      await m.owner.query<{ id: string }>(
        `INSERT INTO sessions (user_id, scope, org_id, auth_method, sso_provider_id, expires_at, revoked_at)
         VALUES ($1, 'organization', $2, 'sso', $3, now() + $4::interval, CASE WHEN $5 THEN now() END) RETURNING id`,
        [userId, t.orgA, provider, over.expiresIn ?? '1 hour', over.revoked ?? false],
      )
    ).rows[0].id;
  const link = (sessionId: string, over: Partial<NewSessionLink> = {}): NewSessionLink => ({
    sessionId,
    orgId: t.orgA,
    partnerId: null,
    providerId: provider,
    protocol: 'oidc',
    subject: 'alice',
    idpSessionId: null,
    nameIdFormat: null,
    idTokenSealed: 'sealed-id-token',
    ...over,
  });
  const linkRows = async (sessionIds: string[]) =>
    (await m.owner.query<{ session_id: string }>(`SELECT session_id FROM sso_session_links WHERE session_id = ANY ($1::uuid[])`, [sessionIds])).rows.map((r) => r.session_id).sort();

  beforeAll(async () => {
    m = await startMedium([SsoSignOutRepository]);
    repo = m.get(SsoSignOutRepository);
    t = await seedTenants(m.owner);
    [provider, otherProvider] = [randomUUID(), randomUUID()];
    for (const id of [provider, otherProvider]) {
      await m.owner.query(`INSERT INTO sso_providers (id, org_id, name, type, status, issuer, client_id) VALUES ($1, $2, 'IdP ' || $3, 'oidc', 'active', 'https://idp.example', 'client')`, [
        id,
        t.orgA,
        t.label,
      ]);
    }
  });
  afterAll(() => m.close());

  describe('insertLink and linkOfSession', () => {
    it('links a session to its IdP session until the session expires, and reads the link back', async () => {
      const s = await session(t.adminA, { expiresIn: '2 hours' });
      await m.system(() => repo.insertLink(link(s, { idpSessionId: 'sid-1' })));
      expect(await m.system(() => repo.linkOfSession(s))).toEqual({
        session_id: s,
        org_id: t.orgA,
        partner_id: null,
        provider_id: provider,
        protocol: 'oidc',
        subject: 'alice',
        idp_session_id: 'sid-1',
        name_id_format: null,
        id_token: 'sealed-id-token',
      });
      const times = (await m.owner.query(`SELECT l.expires_at = s.expires_at AS same FROM sso_session_links l JOIN sessions s ON s.id = l.session_id WHERE l.session_id = $1`, [s])).rows[0];
      expect(times).toEqual({ same: true });
    });

    it('links nothing for a missing session, refuses a second link of a session, and an ID token on a SAML link', async () => {
      const missing = randomUUID();
      await m.system(() => repo.insertLink(link(missing)));
      expect(await linkRows([missing])).toEqual([]);
      expect(await m.system(() => repo.linkOfSession(missing))).toBeNull();
      const s = await session(t.adminA);
      await m.system(() => repo.insertLink(link(s)));
      await expect(m.system(() => repo.insertLink(link(s, { subject: 'mallory' })))).rejects.toThrow(/duplicate key/);
      const saml = await session(t.adminA);
      await expect(m.system(() => repo.insertLink(link(saml, { protocol: 'saml' })))).rejects.toThrow(/check constraint/);
      expect(await linkRows([saml])).toEqual([]);
    });

    it('neither writes nor reads a link under a tenant’s scope', async () => {
      const s = await session(t.adminA);
      await expect(m.as(asAdminA(), () => repo.insertLink(link(s)))).rejects.toThrow(/row-level security/);
      await m.system(() => repo.insertLink(link(s)));
      expect(await m.as(asAdminA(), () => repo.linkOfSession(s))).toBeNull();
      expect(await m.as(asAdminA(), () => repo.sessionsNamed({ providerId: provider, subject: 'alice', idpSessionId: null }))).toEqual([]);
    });
  });

  describe('sessionsNamed', () => {
    let s: { aliceSid1: string; aliceSid2: string; aliceNoSid: string; bobSid1: string; aliceRevoked: string; aliceOther: string };

    beforeAll(async () => {
      const subject = `alice-${t.label}`;
      const bob = `bob-${t.label}`;
      s = {
        aliceSid1: await session(t.adminA),
        aliceSid2: await session(t.adminA),
        aliceNoSid: await session(t.adminA),
        bobSid1: await session(t.readerA),
        aliceRevoked: await session(t.adminA, { revoked: true }),
        aliceOther: await session(t.adminA),
      };
      await m.system(async () => {
        await repo.insertLink(link(s.aliceSid1, { subject, idpSessionId: `named-1-${t.label}` }));
        await repo.insertLink(link(s.aliceSid2, { subject, idpSessionId: `named-2-${t.label}` }));
        await repo.insertLink(link(s.aliceNoSid, { subject }));
        await repo.insertLink(link(s.bobSid1, { subject: bob, idpSessionId: `named-1-${t.label}` }));
        await repo.insertLink(link(s.aliceRevoked, { subject, idpSessionId: `named-1-${t.label}` }));
        await repo.insertLink(link(s.aliceOther, { subject, idpSessionId: `named-1-${t.label}`, providerId: otherProvider }));
      });
    });
    const named = (subject: string | null, idpSessionId: string | null) => m.system(async () => (await repo.sessionsNamed({ providerId: provider, subject, idpSessionId })).sort());

    it('names the live sessions of an IdP session, of one subject when both are given', async () => {
      expect(await named(null, `named-1-${t.label}`)).toEqual([s.aliceSid1, s.bobSid1].sort());
      expect(await named(`alice-${t.label}`, `named-1-${t.label}`)).toEqual([s.aliceSid1]);
      expect(await named(`bob-${t.label}`, `named-2-${t.label}`)).toEqual([]);
    });

    it('names every live session of a subject when no IdP session is given', async () => {
      expect(await named(`alice-${t.label}`, null)).toEqual([s.aliceSid1, s.aliceSid2, s.aliceNoSid].sort());
      expect(await named('nobody', null)).toEqual([]);
    });
  });

  describe('rememberLogoutToken', () => {
    const token = (jti: string, over: { providerId?: string; expiresAt?: Date } = {}) => ({
      orgId: t.orgA,
      partnerId: null,
      providerId: over.providerId ?? provider,
      jti,
      expiresAt: over.expiresAt ?? new Date(Date.now() + 600_000),
    });

    it('records a token once per provider: a replay answers false', async () => {
      const jti = `jti-${randomBytes(6).toString('hex')}`;
      expect(await m.system(() => repo.rememberLogoutToken(token(jti)))).toBe(true);
      expect(await m.system(() => repo.rememberLogoutToken(token(jti)))).toBe(false);
      expect(await m.system(() => repo.rememberLogoutToken(token(jti, { providerId: otherProvider })))).toBe(true);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM sso_logout_tokens_seen WHERE jti = $1`, [jti])).rows[0].n).toBe(2);
    });

    it('forgets tokens that have expired, so their jti is accepted again', async () => {
      const jti = `jti-${randomBytes(6).toString('hex')}`;
      await m.owner.query(`INSERT INTO sso_logout_tokens_seen (org_id, provider_id, jti, expires_at) VALUES ($1, $2, $3, now() - interval '1 minute')`, [t.orgA, provider, jti]);
      // Each call purges a hundred expired tokens of every tenant; a few calls reach this one whatever the others left.
      for (let i = 0; i < 50 && (await m.owner.query(`SELECT 1 FROM sso_logout_tokens_seen WHERE jti = $1 AND expires_at < now()`, [jti])).rows.length; i++) {
        await m.system(() => repo.rememberLogoutToken(token(`purge-${randomBytes(6).toString('hex')}`)));
      }
      expect(await m.system(() => repo.rememberLogoutToken(token(jti)))).toBe(true);
    });

    it('records nothing under a tenant’s scope', async () => {
      const jti = `jti-${randomBytes(6).toString('hex')}`;
      await expect(m.as(asAdminA(), () => repo.rememberLogoutToken(token(jti)))).rejects.toThrow(/row-level security/);
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM sso_logout_tokens_seen WHERE jti = $1`, [jti])).rows[0].n).toBe(0);
    });
  });

  describe('dropSignInState and sweepExpiredLinks', () => {
    const code = (sessionId: string) => insertExchangeCode(m.owner, t.orgA, t.adminA, sessionId);
    const codes = async (sessionIds: string[]) => (await m.owner.query(`SELECT count(*)::int AS n FROM sso_exchange_codes WHERE session_id = ANY ($1::uuid[])`, [sessionIds])).rows[0].n;

    it('drops the exchange codes and links of the ended sessions only, and nothing for none', async () => {
      const [ended, kept] = [await session(t.adminA), await session(t.adminA)];
      for (const s of [ended, kept]) {
        await m.system(() => repo.insertLink(link(s)));
        await code(s);
      }
      await m.system(() => repo.dropSignInState([]));
      expect([await linkRows([ended, kept]), await codes([ended, kept])]).toEqual([[ended, kept].sort(), 2]);
      await m.system(() => repo.dropSignInState([ended]));
      expect(await linkRows([ended, kept])).toEqual([kept]);
      expect([await codes([ended]), await codes([kept])]).toEqual([0, 1]);
    });

    it('drops no link under a tenant’s scope', async () => {
      const s = await session(t.adminA);
      await m.system(() => repo.insertLink(link(s)));
      await m.as(asAdminA(), () => repo.dropSignInState([s]));
      expect(await linkRows([s])).toEqual([s]);
    });

    it('sweeps links whose sessions expired, and keeps live ones', async () => {
      const [expired, live] = [await session(t.adminA), await session(t.adminA)];
      await m.system(async () => {
        await repo.insertLink(link(expired));
        await repo.insertLink(link(live));
      });
      await m.owner.query(`UPDATE sso_session_links SET expires_at = now() - interval '1 minute' WHERE session_id = $1`, [expired]);
      // A hundred a call across every tenant: a few calls reach this one whatever the others left.
      for (let i = 0; i < 50 && (await linkRows([expired])).length; i++) await m.system(() => repo.sweepExpiredLinks());
      expect(await linkRows([expired, live])).toEqual([live]);
    });
  });
});
