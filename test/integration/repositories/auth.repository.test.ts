import { randomBytes, randomUUID } from 'node:crypto';
import { AuthRepository } from '../../../src/modules/auth/auth.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * The auth tables: accounts as sign-in reads them, sessions and their refresh tokens, MFA
 * challenges and password-reset tokens. Sign-in, refresh and MFA run in system context; a
 * signed-in user's own context sees its own sessions only, and no challenge or reset token.
 */
describe('AuthRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let auth: AuthRepository;
  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const hash = () => randomBytes(32).toString('hex');
  const session = (userId: string, over: Partial<Parameters<AuthRepository['createSession']>[0]> = {}) => ({
    userId,
    scope: 'organization',
    orgId: t.orgA,
    partnerId: null,
    mfa: true,
    authMethod: 'password' as const,
    ttlSeconds: 3600,
    ...over,
  });
  /** An identity of its own with the given memberships, created as the owner. */
  const person = async (tag: string) => {
    const id = randomUUID();
    await m.owner.query(`INSERT INTO users (id, email, name) VALUES ($1, $2, $3)`, [id, `${tag}@${t.label}.example`, `Person ${tag}`]);
    return id;
  };
  const storedSession = async (id: string) => (await m.owner.query(`SELECT revoked_at, revoked_reason FROM sessions WHERE id = $1`, [id])).rows[0];
  const liveTokens = async (sessionId: string) =>
    (await m.owner.query<{ n: number }>(`SELECT count(*)::int AS n FROM refresh_tokens WHERE session_id = $1 AND used_at IS NULL AND expires_at > now()`, [sessionId])).rows[0].n;

  beforeAll(async () => {
    m = await startMedium([AuthRepository]);
    auth = m.get(AuthRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('accounts', () => {
    it('finds an account by email without regard to case, and by id, with its credential columns', async () => {
      const expected = { id: t.adminA, email: t.emails.adminA, name: 'Admin A', password_hash: null, status: 'active', totp_secret: null, totp_pending_secret: null };
      expect(await m.system(() => auth.userByEmail(t.emails.adminA.toUpperCase()))).toEqual(expected);
      expect(await m.system(() => auth.userById(t.adminA))).toEqual(expected);
      expect(await m.system(() => auth.lockUser(t.adminA))).toEqual(expected);
    });

    it('answers null for an unknown account, and for an account of another tenant in a tenant’s context', async () => {
      expect(await m.system(() => auth.userByEmail(`nobody@${t.label}.example`))).toBeNull();
      expect(await m.system(() => auth.userById(randomUUID()))).toBeNull();
      expect(await m.as(asAdminA(), () => auth.userByEmail(t.emails.adminB))).toBeNull();
      expect(await m.as(asAdminA(), () => auth.userById(t.adminB))).toBeNull();
      expect(await m.as(asAdminA(), () => auth.lockUser(t.adminB))).toBeNull();
    });
  });

  describe('loginScope', () => {
    it('signs a technician in to the partner, and anyone else in to the oldest live organization membership', async () => {
      expect(await m.system(() => auth.loginScope(t.tech))).toMatchObject({ scope: 'partner', org_id: null, partner_id: t.partnerP });
      const both = await person('two-orgs');
      await m.owner.query(`INSERT INTO organization_memberships (org_id, user_id, role_id, created_at) VALUES ($1, $2, $3, now() - interval '1 day'), ($4, $2, $5, now())`, [
        t.orgB,
        both,
        t.roleAdminB,
        t.orgA,
        t.roleReaderA,
      ]);
      expect(await m.system(() => auth.loginScope(both))).toMatchObject({ scope: 'organization', org_id: t.orgB, partner_id: null });
      await m.owner.query(`UPDATE organization_memberships SET suspended_at = now() WHERE org_id = $1 AND user_id = $2`, [t.orgB, both]);
      expect(await m.system(() => auth.loginScope(both))).toMatchObject({ scope: 'organization', org_id: t.orgA });
    });

    it('passes over a suspended partner or organization, and answers null when nothing is left', async () => {
      const techInA = await person('tech-in-a');
      const partnerR = randomUUID();
      await m.owner.query(`INSERT INTO partners (id, name, status) VALUES ($1, $2, 'suspended')`, [partnerR, `Partner R ${t.label}`]);
      const roleR = randomUUID();
      await m.owner.query(`INSERT INTO roles (id, scope, partner_id, name, permissions) VALUES ($1, 'partner', $2, 'Technician', '{*}')`, [roleR, partnerR]);
      await m.owner.query(`INSERT INTO partner_memberships (partner_id, user_id, role_id, org_access) VALUES ($1, $2, $3, 'all')`, [partnerR, techInA, roleR]);
      await m.owner.query(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3)`, [t.orgA, techInA, t.roleReaderA]);
      expect(await m.system(() => auth.loginScope(techInA))).toMatchObject({ scope: 'organization', org_id: t.orgA });
      const orgS = randomUUID();
      await m.owner.query(`INSERT INTO organizations (id, partner_id, name, status) VALUES ($1, $2, $3, 'suspended')`, [orgS, t.partnerP, `Org S ${t.label}`]);
      const inSuspended = await person('in-suspended');
      const roleS = randomUUID();
      await m.owner.query(`INSERT INTO roles (id, scope, org_id, name, permissions) VALUES ($1, 'organization', $2, 'Admin', '{*}')`, [roleS, orgS]);
      await m.owner.query(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3)`, [orgS, inSuspended, roleS]);
      expect(await m.system(() => auth.loginScope(inSuspended))).toBeNull();
      const nowhere = await person('nowhere');
      expect(await m.system(() => auth.loginScope(nowhere))).toBeNull();
    });
  });

  describe('sessions', () => {
    it('creates a session with its first refresh token in one statement, and reads it while it lives', async () => {
      const refresh = hash();
      const id = await m.system(() => auth.createSession(session(t.adminA), { hash: refresh, ttlSeconds: 7200 }));
      expect(await m.system(() => auth.session(id))).toEqual({ id, user_id: t.adminA, scope: 'organization', org_id: t.orgA, partner_id: null, mfa: true });
      expect(await m.as(asAdminA(), () => auth.session(id))).toMatchObject({ id });
      expect((await m.owner.query(`SELECT session_id, user_id, used_at FROM refresh_tokens WHERE token_hash = $1`, [refresh])).rows).toEqual([{ session_id: id, user_id: t.adminA, used_at: null }]);
      const age = await m.system(() => auth.sessionAgeSeconds(id));
      expect(age).toBeGreaterThanOrEqual(0);
    });

    it('does not read an expired session, a revoked one, or one of a disabled account', async () => {
      const expired = await m.system(() => auth.createSession(session(t.readerA, { ttlSeconds: -1 }), { hash: hash(), ttlSeconds: 60 }));
      expect(await m.system(() => auth.session(expired))).toBeNull();
      const disabled = await person('disabled-session');
      const ofDisabled = await m.system(() => auth.createSession(session(disabled), { hash: hash(), ttlSeconds: 60 }));
      expect(await m.system(() => auth.session(ofDisabled))).not.toBeNull();
      await m.owner.query(`UPDATE users SET status = 'disabled' WHERE id = $1`, [disabled]);
      expect(await m.system(() => auth.session(ofDisabled))).toBeNull();
      expect(await m.system(() => auth.session(randomUUID()))).toBeNull();
    });

    it('revokes a session once, keeping the first reason, after which it has no age', async () => {
      const id = await m.system(() => auth.createSession(session(t.readerA), { hash: hash(), ttlSeconds: 60 }));
      await m.system(() => auth.revokeSession(id, 'logout'));
      const first = await storedSession(id);
      await m.system(() => auth.revokeSession(id, 'again'));
      expect(await storedSession(id)).toEqual(first);
      expect(first.revoked_reason).toBe('logout');
      expect(await m.system(() => auth.session(id))).toBeNull();
      expect(await m.system(() => auth.sessionAgeSeconds(id))).toBeNull();
    });

    it('revokes every live session of an account but the one kept', async () => {
      const user = await person('many-sessions');
      const [a, b, c] = [
        await m.system(() => auth.createSession(session(user), { hash: hash(), ttlSeconds: 60 })),
        await m.system(() => auth.createSession(session(user), { hash: hash(), ttlSeconds: 60 })),
        await m.system(() => auth.createSession(session(user), { hash: hash(), ttlSeconds: 60 })),
      ];
      await m.system(() => auth.revokeUserSessions(user, 'password_changed', b));
      expect([(await storedSession(a)).revoked_reason, (await storedSession(b)).revoked_reason, (await storedSession(c)).revoked_reason]).toEqual(['password_changed', null, 'password_changed']);
      await m.system(() => auth.revokeUserSessions(user, 'all'));
      expect((await storedSession(b)).revoked_reason).toBe('all');
      expect((await storedSession(a)).revoked_reason).toBe('password_changed');
    });

    it('keeps another user’s sessions out of a user’s own context', async () => {
      const ofB = await m.system(() => auth.createSession(session(t.adminB, { orgId: t.orgB }), { hash: hash(), ttlSeconds: 60 }));
      expect(await m.as(asAdminA(), () => auth.session(ofB))).toBeNull();
      expect(await m.as(asAdminA(), () => auth.sessionAgeSeconds(ofB))).toBeNull();
      await m.as(asAdminA(), () => auth.revokeSession(ofB, 'hijacked'));
      await m.as(asAdminA(), () => auth.revokeUserSessions(t.adminB, 'hijacked'));
      expect(await m.as(asAdminA(), () => auth.endSessions([ofB], 'hijacked'))).toEqual([]);
      expect(await storedSession(ofB)).toEqual({ revoked_at: null, revoked_reason: null });
      await expect(m.as(asAdminA(), () => auth.createSession(session(t.adminB, { orgId: t.orgB }), { hash: hash(), ttlSeconds: 60 }))).rejects.toThrow(/row-level security/);
    });
  });

  describe('refresh tokens', () => {
    it('consumes a refresh token once, after which its family shows it used', async () => {
      const id = await m.system(() => auth.createSession(session(t.readerA), { hash: hash(), ttlSeconds: 60 }));
      const next = hash();
      await m.system(() => auth.insertRefreshToken(id, t.readerA, next, 60));
      expect(await m.system(() => auth.refreshTokenFamily(next))).toEqual({ session_id: id, used_at: null });
      expect(await m.system(() => auth.consumeRefreshToken(next))).toEqual({ session_id: id, user_id: t.readerA });
      expect(await m.system(() => auth.consumeRefreshToken(next))).toBeNull();
      expect(await m.system(() => auth.refreshTokenFamily(next))).toEqual({ session_id: id, used_at: expect.any(Date) });
    });

    it('consumes no expired or unknown token, and refuses a token hash twice', async () => {
      const id = await m.system(() => auth.createSession(session(t.readerA), { hash: hash(), ttlSeconds: 60 }));
      const expired = hash();
      await m.system(() => auth.insertRefreshToken(id, t.readerA, expired, -1));
      expect(await m.system(() => auth.consumeRefreshToken(expired))).toBeNull();
      expect(await m.system(() => auth.consumeRefreshToken(hash()))).toBeNull();
      expect(await m.system(() => auth.refreshTokenFamily(hash()))).toBeNull();
      await expect(m.system(() => auth.insertRefreshToken(id, t.readerA, expired, 60))).rejects.toThrow(/duplicate key/);
    });

    it('consumes and shows no token of another user in a user’s own context', async () => {
      const id = await m.system(() => auth.createSession(session(t.adminB, { orgId: t.orgB }), { hash: hash(), ttlSeconds: 60 }));
      const ofB = hash();
      await m.system(() => auth.insertRefreshToken(id, t.adminB, ofB, 60));
      expect(await m.as(asAdminA(), () => auth.consumeRefreshToken(ofB))).toBeNull();
      expect(await m.as(asAdminA(), () => auth.refreshTokenFamily(ofB))).toBeNull();
      await expect(m.as(asAdminA(), () => auth.insertRefreshToken(id, t.adminB, hash(), 60))).rejects.toThrow(/row-level security/);
      expect(await m.system(() => auth.refreshTokenFamily(ofB))).toEqual({ session_id: id, used_at: null });
    });
  });

  describe('ending sessions', () => {
    it('ends the live sessions a provider minted and expires their unused refresh tokens', async () => {
      const provider = randomUUID();
      const other = randomUUID();
      const sso = (userId: string, p: string) => m.system(() => auth.createSession(session(userId, { authMethod: 'sso', ssoProviderId: p }), { hash: hash(), ttlSeconds: 60 }));
      const [a, b, elsewhere, gone] = [await sso(t.adminA, provider), await sso(t.readerA, provider), await sso(t.readerA, other), await sso(t.readerA, provider)];
      await m.system(() => auth.revokeSession(gone, 'logout'));
      const ended = await m.system(() => auth.endSessionsMintedBy(provider, 'provider_disabled'));
      expect(ended.sort((x, y) => x.id.localeCompare(y.id))).toEqual(
        [
          { id: a, user_id: t.adminA },
          { id: b, user_id: t.readerA },
        ].sort((x, y) => x.id.localeCompare(y.id)),
      );
      expect([await liveTokens(a), await liveTokens(b), await liveTokens(elsewhere)]).toEqual([0, 0, 1]);
      expect((await storedSession(gone)).revoked_reason).toBe('logout');
      expect(await m.system(() => auth.endSessionsMintedBy(provider, 'again'))).toEqual([]);
    });

    it('ends the given sessions, answers only those that were live, and nothing for none', async () => {
      const [a, b] = [
        await m.system(() => auth.createSession(session(t.readerA), { hash: hash(), ttlSeconds: 60 })),
        await m.system(() => auth.createSession(session(t.readerA), { hash: hash(), ttlSeconds: 60 })),
      ];
      await m.system(() => auth.revokeSession(b, 'logout'));
      expect(await m.system(() => auth.endSessions([a, b, randomUUID()], 'membership_removed'))).toEqual([{ id: a, user_id: t.readerA }]);
      expect(await liveTokens(a)).toBe(0);
      expect((await storedSession(a)).revoked_reason).toBe('membership_removed');
      expect(await m.system(() => auth.endSessions([], 'nothing'))).toEqual([]);
    });
  });

  describe('MFA challenges', () => {
    it('stores a challenge, names its owner, and drops the account’s challenges older than a day', async () => {
      const user = await person('mfa-store');
      const stale = hash();
      await m.owner.query(`INSERT INTO mfa_challenges (user_id, token_hash, created_at, expires_at) VALUES ($1, $2, now() - interval '25 hours', now() - interval '24 hours')`, [user, stale]);
      const fresh = hash();
      await m.system(() => auth.insertMfaChallenge(user, fresh, 300));
      expect(await m.system(() => auth.mfaChallengeOwner(fresh))).toBe(user);
      expect(await m.system(() => auth.mfaChallengeOwner(stale))).toBeNull();
      expect(await m.system(() => auth.mfaChallengeOwner(hash()))).toBeNull();
    });

    it('spends attempts until none is left, closing the challenge, and consumes an open one once', async () => {
      const user = await person('mfa-attempts');
      const h = hash();
      await m.system(() => auth.insertMfaChallenge(user, h, 300));
      const locked = await m.system(() => auth.lockMfaChallenge(h, 3));
      expect(locked).toEqual({ id: expect.any(String), user_id: user, open: true });
      const spent = [];
      for (let i = 0; i < 4; i++) spent.push(await m.system(() => auth.recordWrongMfaCode(locked!.id, 3)));
      expect(spent).toEqual([1, 2, 3, null]);
      expect(await m.system(() => auth.lockMfaChallenge(h, 3))).toMatchObject({ open: false });
      expect(await m.system(() => auth.consumeMfaChallenge(locked!.id, 3))).toBe(false);
      const other = hash();
      await m.system(() => auth.insertMfaChallenge(user, other, 300));
      const second = (await m.system(() => auth.lockMfaChallenge(other, 3)))!;
      expect(await m.system(() => auth.consumeMfaChallenge(second.id, 3))).toBe(true);
      expect(await m.system(() => auth.consumeMfaChallenge(second.id, 3))).toBe(false);
      expect(await m.system(() => auth.recordWrongMfaCode(second.id, 3))).toBeNull();
      expect(await m.system(() => auth.lockMfaChallenge(other, 3))).toMatchObject({ open: false });
      expect(await m.system(() => auth.lockMfaChallenge(hash(), 3))).toBeNull();
    });

    it('neither opens nor consumes an expired challenge', async () => {
      const user = await person('mfa-expired');
      const h = hash();
      await m.system(() => auth.insertMfaChallenge(user, h, -1));
      const locked = (await m.system(() => auth.lockMfaChallenge(h, 5)))!;
      expect(locked.open).toBe(false);
      expect(await m.system(() => auth.consumeMfaChallenge(locked.id, 5))).toBe(false);
    });

    it('counts the wrong codes of the account’s challenges within the window, and when the oldest leaves it', async () => {
      const user = await person('mfa-window');
      expect(await m.system(() => auth.recentWrongMfaCodes(user, 900))).toEqual({ wrong: 0, retryAfterSeconds: 900 });
      await m.owner.query(
        `INSERT INTO mfa_challenges (user_id, token_hash, created_at, expires_at, attempts) VALUES
           ($1, $2, now() - interval '20 minutes', now(), 4), ($1, $3, now() - interval '5 minutes', now() + interval '5 minutes', 2), ($1, $4, now(), now() + interval '5 minutes', 1)`,
        [user, hash(), hash(), hash()],
      );
      const recent = await m.system(() => auth.recentWrongMfaCodes(user, 900));
      expect(recent.wrong).toBe(3);
      // The oldest counted challenge is five minutes old, so it leaves a fifteen-minute window in ten minutes at most.
      expect(recent.retryAfterSeconds).toBeGreaterThan(0);
      expect(recent.retryAfterSeconds).toBeLessThanOrEqual(600);
    });

    it('deletes every challenge of the account and none of another', async () => {
      const [user, bystander] = [await person('mfa-delete'), await person('mfa-bystander')];
      const [mine, theirs] = [hash(), hash()];
      await m.system(() => auth.insertMfaChallenge(user, mine, 300));
      await m.system(() => auth.insertMfaChallenge(bystander, theirs, 300));
      await m.system(() => auth.deleteMfaChallenges(user));
      expect(await m.system(() => auth.mfaChallengeOwner(mine))).toBeNull();
      expect(await m.system(() => auth.mfaChallengeOwner(theirs))).toBe(bystander);
    });

    it('keeps challenges out of every tenant context', async () => {
      const h = hash();
      await m.system(() => auth.insertMfaChallenge(t.adminA, h, 300));
      expect(await m.as(asAdminA(), () => auth.mfaChallengeOwner(h))).toBeNull();
      expect(await m.as(asAdminA(), () => auth.lockMfaChallenge(h, 5))).toBeNull();
      await expect(m.as(asAdminA(), () => auth.insertMfaChallenge(t.adminA, hash(), 300))).rejects.toThrow(/row-level security/);
      await m.as(asAdminA(), () => auth.deleteMfaChallenges(t.adminA));
      expect(await m.system(() => auth.mfaChallengeOwner(h))).toBe(t.adminA);
    });
  });

  describe('password reset tokens', () => {
    it('keeps one open token per account: a newer one replaces the older link in place', async () => {
      const user = await person('reset-twice');
      const [older, newer] = [hash(), hash()];
      await m.system(() => auth.issueResetToken(user, older, 3600));
      await m.system(() => auth.issueResetToken(user, newer, 3600));
      expect((await m.owner.query(`SELECT token_hash FROM password_reset_tokens WHERE user_id = $1`, [user])).rows).toEqual([{ token_hash: newer }]);
      expect(await m.system(() => auth.consumeResetToken(older))).toBeNull();
      expect(await m.system(() => auth.consumeResetToken(newer))).toEqual({ user_id: user });
      expect(await m.system(() => auth.consumeResetToken(newer))).toBeNull();
      const third = hash();
      await m.system(() => auth.issueResetToken(user, third, 3600));
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM password_reset_tokens WHERE user_id = $1`, [user])).rows[0].n).toBe(2);
    });

    it('consumes no expired or retired token', async () => {
      const user = await person('reset-retired');
      const expired = hash();
      await m.system(() => auth.issueResetToken(user, expired, -1));
      expect(await m.system(() => auth.consumeResetToken(expired))).toBeNull();
      const open = hash();
      await m.system(() => auth.issueResetToken(user, open, 3600));
      await m.system(() => auth.retireResetTokens(user));
      expect(await m.system(() => auth.consumeResetToken(open))).toBeNull();
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM password_reset_tokens WHERE user_id = $1 AND used_at IS NULL`, [user])).rows[0].n).toBe(0);
    });

    it('keeps reset tokens out of every tenant context', async () => {
      const h = hash();
      await m.system(() => auth.issueResetToken(t.readerA, h, 3600));
      expect(await m.as(asAdminA(), () => auth.consumeResetToken(h))).toBeNull();
      await m.as(asAdminA(), () => auth.retireResetTokens(t.readerA));
      await expect(m.as(asAdminA(), () => auth.issueResetToken(t.readerA, hash(), 3600))).rejects.toThrow(/row-level security/);
      expect(await m.system(() => auth.consumeResetToken(h))).toEqual({ user_id: t.readerA });
    });
  });
});
