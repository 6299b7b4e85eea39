import { randomBytes } from 'node:crypto';
import { SsoStateCleanupJob } from '../../../src/modules/sso/saml/sso-state-cleanup.job';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { BOOT_TIMEOUT_MS, insertProvider } from './sso-login.kit';

/**
 * The periodic clean-up of sign-in state (SsoStateCleanupJob): sign-ins no longer prune login
 * sessions, exchange codes or sign-out links as they write, so this job is what removes them.
 */
describe('SSO sign-in state clean-up', () => {
  let t: TestApp;
  let orgId: string;
  let userId: string;
  let providerId: string;

  beforeAll(async () => {
    t = await startTestApp();
    const ids = await t.seed(tenantFixture());
    orgId = ids.orgA;
    userId = ids.readerA;
    providerId = await insertProvider(t, { orgId, type: 'saml' });
  }, BOOT_TIMEOUT_MS);
  afterAll(() => t.close());

  const token = () => randomBytes(16).toString('hex');

  /** A login session that expired `age` ago (a negative age: one still valid). */
  const loginSession = async (age: string): Promise<string> => {
    const state = token();
    await ownerQuery(
      `INSERT INTO sso_sessions (org_id, provider_id, state, nonce, code_verifier, generation, expires_at) VALUES ($1, $2, $3, $4, $5, 1, now() - $6::interval)`,
      [orgId, providerId, state, token(), token(), age],
    );
    return state;
  };

  /** A session whose exchange code and sign-out link expired, or not. */
  const signedIn = async (expired: boolean): Promise<string> => {
    const when = expired ? `now() - interval '1 day'` : 'now()';
    const [session] = await ownerQuery<{ id: string }>(
      `INSERT INTO sessions (user_id, scope, org_id, auth_method, sso_provider_id, created_at, expires_at)
       VALUES ($1, 'organization', $2, 'sso', $3, ${when}, ${when} + interval '1 hour') RETURNING id`,
      [userId, orgId, providerId],
    );
    await ownerQuery(
      `INSERT INTO sso_exchange_codes (org_id, code_hash, session_id, user_id, tokens, created_at, expires_at)
       VALUES ($1, $2, $3, $4, 'sealed', ${when}, ${when} + interval '2 minutes')`,
      [orgId, token(), session.id, userId],
    );
    await ownerQuery(
      `INSERT INTO sso_session_links (session_id, org_id, provider_id, protocol, subject, created_at, expires_at)
       VALUES ($1, $2, $3, 'saml', 'someone', ${when}, ${when} + interval '1 hour')`,
      [session.id, orgId, providerId],
    );
    return session.id;
  };

  const remaining = async (states: string[], sessionIds: string[]) => {
    const [row] = await ownerQuery<{ sessions: string[]; codes: string[]; links: string[] }>(
      `SELECT coalesce((SELECT array_agg(state ORDER BY state) FROM sso_sessions WHERE state = ANY ($1)), '{}') AS sessions,
              coalesce((SELECT array_agg(session_id::text) FROM sso_exchange_codes WHERE session_id = ANY ($2::uuid[])), '{}') AS codes,
              coalesce((SELECT array_agg(session_id::text) FROM sso_session_links WHERE session_id = ANY ($2::uuid[])), '{}') AS links`,
      [states, sessionIds],
    );
    return row;
  };

  it('removes expired login sessions, exchange codes and sign-out links, and keeps the live ones', async () => {
    const abandoned = await loginSession('2 hours');
    const justExpired = await loginSession('1 minute');
    const valid = await loginSession('-10 minutes');
    const ended = await signedIn(true);
    const live = await signedIn(false);

    // A pass removes at most 100 expired rows a table; on the run's shared database other files leave
    // expired codes too, so pass until none is left (as the schedule would), a bounded number of times.
    const job = t.app.get(SsoStateCleanupJob);
    await job.runOnce();
    for (let pass = 0; pass < 50 && (await ownerQuery(`SELECT 1 FROM sso_exchange_codes WHERE expires_at < now() LIMIT 1`)).length > 0; pass++) await job.runOnce();

    const left = await remaining([abandoned, justExpired, valid], [ended, live]);
    // A login session is kept an hour past its expiry, so a late callback is still told it expired.
    expect(left.sessions).toEqual([justExpired, valid].sort());
    expect(left.codes).toEqual([live]);
    expect(left.links).toEqual([live]);
  });
});
