import request from 'supertest';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { tenantFixture } from '../../factories/tenant.factory';
import { browserlessAuthorize, OidcOpHandle } from '../../support/idp/oidc-op';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, callback, exchange, exchangeCodeOf, freshIp, insertProvider, mintedThrough, opEndpoints, registerWithOp, roundTrip, startLogin, verifyDomain, BOOT_TIMEOUT_MS, startOp } from './sso-login.kit';

/** What an attacker would try against the sign-in flow. */
describe('OIDC sign-in under attack', () => {
  let t: TestApp;
  let op: OidcOpHandle;
  let f: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;
  let provider: string;
  const loginPath = () => `/api/v1/sso/login/${ids.orgA}`;

  beforeAll(async () => {
    [t, op] = await Promise.all([startTestApp(), startOp()]);
    await registerWithOp(op);
    f = tenantFixture();
    ids = await t.seed(f);
    // The victim signs in with a password too: linking that account by email needs the organization's domain proof.
    await verifyDomain(ids.orgA, f.emails.readerA.split('@')[1]);
    provider = await insertProvider(t, { orgId: ids.orgA, ...opEndpoints(op) });
    await op.setAccount('victim', { email: f.emails.readerA, email_verified: true, name: 'Reader A' });
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), op.stop()]);
  });

  /** Login start and the IdP leg, stopping where the browser is about to hit the callback. */
  async function atCallback() {
    await op.loginAs('victim');
    const started = await startLogin(t, loginPath());
    return { started, idpRedirect: await browserlessAuthorize(started.location), state: new URL(started.location).searchParams.get('state')! };
  }

  describe('browser binding and single use of the state', () => {
    it('refuses the callback in a second browser (no cookie) and leaves the attempt usable in the first', async () => {
      const { started, idpRedirect, state } = await atCallback();
      const stolen = await callback(t, idpRedirect);
      expect(stolen.location).toBe('/login?error=invalid_callback');
      expect(stolen.setCookie).toEqual([]);
      expect(await ownerQuery(`SELECT 1 AS present FROM sso_sessions WHERE state = $1`, [state])).toEqual([{ present: 1 }]);
      expect((await auditOf(provider, 'sso.login.rejected'))[0].details).toEqual({ code: 'invalid_callback', reason: 'state_cookie_missing' });

      const own = await callback(t, idpRedirect, started.cookie);
      expect(own.location).toMatch(/^\/#ssoCode=/);
    });

    it("refuses the callback carrying another attempt's valid cookie", async () => {
      const victim = await atCallback();
      const attacker = await startLogin(t, loginPath());
      const cb = await callback(t, victim.idpRedirect, attacker.cookie);
      expect(cb.location).toBe('/login?error=invalid_callback');
      expect((await auditOf(provider, 'sso.login.rejected'))[0].details.reason).toBe('state_cookie_mismatch');
    });

    it('refuses a replayed state after a successful sign-in, and mints nothing more', async () => {
      const { started, idpRedirect } = await atCallback();
      expect((await callback(t, idpRedirect, started.cookie)).location).toMatch(/^\/#ssoCode=/);
      const before = await mintedThrough(provider);
      const replay = await callback(t, idpRedirect, started.cookie);
      expect(replay.location).toBe('/login?error=session_expired');
      expect(await mintedThrough(provider)).toEqual(before);
      expect((await auditOf(provider, 'sso.login.rejected')).length).toBeGreaterThan(0);
    });

    it('refuses an expired state (older than 10 minutes) and removes it', async () => {
      const { started, idpRedirect, state } = await atCallback();
      await ownerQuery(`UPDATE sso_sessions SET expires_at = now() - interval '1 second' WHERE state = $1`, [state]);
      const cb = await callback(t, idpRedirect, started.cookie);
      expect(cb.location).toBe('/login?error=session_expired');
      expect((await auditOf(provider, 'sso.login.rejected'))[0].details).toEqual({ code: 'session_expired', reason: 'state_expired' });
      expect(await ownerQuery(`SELECT 1 FROM sso_sessions WHERE state = $1`, [state])).toEqual([]);
    });

    it('lets exactly one of two parallel callbacks for one state through', async () => {
      const { started, idpRedirect } = await atCallback();
      const before = await mintedThrough(provider);
      const results = await Promise.all([callback(t, idpRedirect, started.cookie), callback(t, idpRedirect, started.cookie)]);
      const locations = results.map((r) => r.location).sort();
      expect(locations[0]).toMatch(/^\/#ssoCode=/);
      expect(locations[1]).toBe('/login?error=session_expired');
      const after = await mintedThrough(provider);
      expect(after.sessions).toBe(before.sessions + 1);
    });
  });

  describe('the one-time exchange code', () => {
    async function freshCode(): Promise<string> {
      const { started, idpRedirect } = await atCallback();
      return exchangeCodeOf((await callback(t, idpRedirect, started.cookie)).location)!;
    }

    it('is redeemed once; the replay is 400 invalid_exchange_code', async () => {
      const code = await freshCode();
      await exchange(t, code).expect(200);
      const replay = await exchange(t, code).expect(400);
      expect(replay.body).toMatchObject({ code: 'invalid_exchange_code', error: 'Invalid or expired token exchange code' });
    });

    it('is stored only as its SHA-256 hash, with the token pair sealed', async () => {
      const code = await freshCode();
      const [row] = await ownerQuery<{ tokens: string }>(`SELECT tokens FROM sso_exchange_codes WHERE code_hash = $1`, [tokenHash(code)]);
      expect(row.tokens).toMatch(/^enc:v1:/);
      expect(row.tokens).not.toContain('rt_');
      expect(await ownerQuery(`SELECT 1 FROM sso_exchange_codes WHERE code_hash = $1 OR tokens LIKE $2`, [code, `%${code}%`])).toEqual([]);
    });

    it('expires after two minutes', async () => {
      const code = await freshCode();
      await ownerQuery(`UPDATE sso_exchange_codes SET expires_at = now() - interval '1 second' WHERE org_id = $1`, [ids.orgA]);
      const res = await exchange(t, code).expect(400);
      expect(res.body.code).toBe('invalid_exchange_code');
      const [audit] = await ownerQuery<{ details: Record<string, string> }>(`SELECT details FROM audit_logs WHERE action = 'sso.exchange.rejected' AND org_id = $1 ORDER BY created_at DESC LIMIT 1`, [ids.orgA]);
      expect(audit.details).toEqual({ reason: 'exchange_code_expired' });
    });

    it('gives the token pair to exactly one of two parallel redemptions', async () => {
      const code = await freshCode();
      const statuses = (await Promise.all([exchange(t, code), exchange(t, code)])).map((r) => r.status).sort();
      expect(statuses).toEqual([200, 400]);
    });

    it('is refused once the session it carries was revoked', async () => {
      const code = await freshCode();
      await ownerQuery(`UPDATE sessions SET revoked_at = now() WHERE id = (SELECT session_id FROM sso_exchange_codes WHERE org_id = $1 ORDER BY created_at DESC LIMIT 1)`, [ids.orgA]);
      expect((await exchange(t, code).expect(400)).body.code).toBe('invalid_exchange_code');
    });

    it('rejects made-up, empty and oversized codes as 400 without a server error', async () => {
      expect((await exchange(t, 'made-up-code').expect(400)).body.code).toBe('invalid_exchange_code');
      expect((await exchange(t, '').expect(400)).body.code).toBe('validation_failed');
      expect((await exchange(t, 'x'.repeat(129)).expect(400)).body.code).toBe('validation_failed');
      const extra = await request(t.http).post('/api/v1/sso/exchange').send({ code: 'x', extra: 1 }).expect(400);
      expect(extra.body.code).toBe('validation_failed');
    });
  });

  describe('the post-login redirect (open redirect attempts)', () => {
    it.each([
      ['https://evil.example/steal', '/'],
      ['//evil.example/steal', '/'],
      ['/\\evil.example', '/'],
      ['javascript:alert(1)', '/'],
      ['/devices?site=1#frag', '/devices?site=1'],
    ])('turns ?redirect=%s into %s', async (redirect, expected) => {
      await op.loginAs('victim');
      const cb = await roundTrip(t, `${loginPath()}?redirect=${encodeURIComponent(redirect)}`);
      expect(cb.location.split('#ssoCode=')[0]).toBe(expected);
      expect(exchangeCodeOf(cb.location)).not.toBeNull();
    });
  });

  describe('rate limits of the login start: per address, and per address and tenant', () => {
    it('allows 10 starts per 5 minutes per client and organization, then answers 429 with Retry-After', async () => {
      const ip = freshIp();
      for (let i = 0; i < 10; i++) expect((await startLogin(t, loginPath(), ip)).status).toBe(302);
      const limited = await startLogin(t, loginPath(), ip);
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ code: 'rate_limited', retryAfter: expect.any(Number) });
      // Another organization from the same client is counted apart.
      const other = await insertProvider(t, { orgId: ids.orgB, ...opEndpoints(op) });
      expect(other).toBeTruthy();
      expect((await startLogin(t, `/api/v1/sso/login/${ids.orgB}`, ip)).status).toBe(302);
    });

    it('allows 30 starts per 5 minutes per client across organizations', async () => {
      const ip = freshIp();
      const tenants = await Promise.all([0, 1, 2, 3].map(() => t.seed(tenantFixture())));
      for (const tenant of tenants) await insertProvider(t, { orgId: tenant.orgA, ...opEndpoints(op) });
      const paths = tenants.map((tenant) => `/api/v1/sso/login/${tenant.orgA}`);
      for (let i = 0; i < 30; i++) expect((await startLogin(t, paths[i % 4], ip)).status).toBe(302);
      expect((await startLogin(t, paths[0], ip)).status).toBe(429);
    });
  });
});
