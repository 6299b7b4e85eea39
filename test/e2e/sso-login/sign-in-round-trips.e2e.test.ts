import { tenantFixture } from '../../factories/tenant.factory';
import { browserlessAuthorize, OidcOpHandle } from '../../support/idp/oidc-op';
import { recordPgMessages, type PgMessages } from '../../support/pg-messages';
import { startTestApp, TestApp } from '../../support/test-app';
import { BOOT_TIMEOUT_MS, callback, exchange, exchangeCodeOf, insertProvider, opEndpoints, registerWithOp, startLogin, startOp, verifyDomain } from './sso-login.kit';

/**
 * How many messages (each one a round trip) a complete OIDC sign-in sends to PostgreSQL: the
 * start, the callback and the exchange, the IdP round trip between them sending none (issue 19).
 * A bound that only goes down: raising it needs a reason in the commit that does.
 */
describe('round trips to PostgreSQL per OIDC sign-in', () => {
  let t: TestApp;
  let op: OidcOpHandle;
  let pg: PgMessages;
  let orgId: string;
  let domain: string;

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOp()]);
    await registerWithOp(op);
    const f = tenantFixture();
    const ids = await t.seed(f);
    orgId = ids.orgA;
    domain = f.emails.adminA.split('@')[1];
    await verifyDomain(orgId, domain);
    await insertProvider(t, { orgId, ...opEndpoints(op), defaultRoleId: ids.readerRoleA, defaultRoleSetBy: ids.adminA });
    pg = recordPgMessages(t.app);
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  /** The messages of start → IdP → callback → exchange, for someone the IdP is ready to sign in. */
  const signInMessages = async (): Promise<string[]> => {
    let code: string | null = null;
    const messages = await pg.during(async () => {
      const started = await startLogin(t, `/api/v1/sso/login/${orgId}`);
      expect(started.status).toBe(302);
      const answered = await callback(t, await browserlessAuthorize(started.location), started.cookie);
      code = exchangeCodeOf(answered.location);
      expect(code).not.toBeNull();
      await exchange(t, code!).expect(200);
    });
    return messages;
  };

  const transactionsOf = (messages: string[]) => messages.filter((m) => m.startsWith('BEGIN')).length;

  it('provisions a first-time user (JIT) in at most 24 messages and 4 transactions', async () => {
    await op.setAccount('round-trips-jit', { email: `round-trips@${domain}`, email_verified: true, name: 'Round Trips' });
    await op.loginAs('round-trips-jit');
    const messages = await signInMessages();
    expect(messages.length).toBeLessThanOrEqual(24);
    expect(transactionsOf(messages)).toBeLessThanOrEqual(4);
  });

  it('signs in a user through their linked identity in at most 17 messages and 4 transactions', async () => {
    await op.loginAs('round-trips-jit');
    const messages = await signInMessages();
    expect(messages.length).toBeLessThanOrEqual(17);
    expect(transactionsOf(messages)).toBeLessThanOrEqual(4);
  });

  it('writes the session and its first refresh token in one statement', async () => {
    await op.loginAs('round-trips-jit');
    const messages = await signInMessages();
    const mints = messages.filter((m) => /INSERT INTO (sessions|refresh_tokens)\b/.test(m));
    expect(mints).toHaveLength(1);
    expect(mints[0]).toMatch(/INSERT INTO sessions\b[\s\S]*INSERT INTO refresh_tokens\b/);
  });
});
