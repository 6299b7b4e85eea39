import { randomBytes, randomUUID } from 'node:crypto';
import { SecretBoxService } from '../../../src/infra/crypto/secret-box.service';
import { clientSecretContext } from '../../../src/modules/sso/providers/sso-provider.types';
import { browserlessAuthorize, startOidcOp, type OidcOpHandle } from '../../support/idp/oidc-op';
import { holdingProxy, type HoldingProxy } from './holding-proxy';
import { ingestAgents, sustainedIngest } from './ingest-load';
import { scratchDatabase, send, startService, type ServiceProcess } from './service-process';

const GRACE_MS = 8000;
const LISTEN_MS = 1500;
const BOOT_MS = 180_000;
const CLIENT_ID = 'rmm-shutdown';
const CLIENT_SECRET = `shutdown-client-secret-${randomBytes(16).toString('hex')}`;
/** The demo organization's owner (src/seed/demo.json), signed in through the organization's IdP. */
const OWNER_EMAIL = 'owner@contoso-dental.example';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 18's SIGTERM fault, with an OIDC sign-in in flight: the real service (src/main.ts) in a
 * child process, agents ingesting at a steady rate, and the sign-in's callback request held inside
 * the service by a proxy in front of the OpenID Provider's token endpoint when the signal arrives.
 * The callback must finish during the drain and mint a session that works; every prompt accepted
 * is stored; the process exits 0.
 */
describe('graceful shutdown with an OIDC sign-in in flight', () => {
  const db = scratchDatabase();
  let op: OidcOpHandle | undefined;
  let proxy: HoldingProxy | undefined;
  const services: ServiceProcess[] = [];

  afterEach(async () => {
    for (const s of services) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGKILL');
        await s.exited;
      }
    }
  });
  afterAll(async () => {
    await proxy?.close();
    await op?.stop();
    await db.drop();
  });

  /** The demo organization's OIDC provider: the test OP, its token endpoint behind the holding proxy. */
  const registerProvider = async (issuer: OidcOpHandle, tokenUrl: string): Promise<{ orgId: string; providerId: string }> => {
    const [owner] = await db.query<{ org_id: string; user_id: string; role_id: string }>(
      `SELECT m.org_id, m.user_id, m.role_id FROM organization_memberships m JOIN users u ON u.id = m.user_id WHERE u.email = $1`,
      [OWNER_EMAIL],
    );
    const providerId = randomUUID();
    const box = new SecretBoxService({ encryptionKey: process.env.SECRET_ENCRYPTION_KEY as string, previousEncryptionKeys: [] });
    await db.query(
      `INSERT INTO sso_providers (id, org_id, name, type, status, issuer, client_id, client_secret, authorization_url, token_url, userinfo_url, jwks_url,
         scopes, attribute_mapping, auto_provision, default_role_id, default_role_set_by, updated_by)
       VALUES ($1, $2, 'Contoso IdP', 'oidc', 'active', $3, $4, $5, $6, $7, $8, $9, 'openid profile email', '{"email":"email","name":"name"}', false, $10, $11, $11)`,
      [
        providerId,
        owner.org_id,
        issuer.issuer,
        CLIENT_ID,
        box.encrypt(CLIENT_SECRET, clientSecretContext(providerId)),
        issuer.authorizationEndpoint,
        tokenUrl,
        issuer.userinfoEndpoint,
        issuer.jwksUrl,
        owner.role_id,
        owner.user_id,
      ],
    );
    // Matching the IdP's account to the owner by email needs the organization's proof of the domain.
    await db.query(
      `INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_seen_at) VALUES ($1, $2, $3, true, now(), now())`,
      [owner.org_id, OWNER_EMAIL.split('@')[1], randomBytes(16).toString('hex')],
    );
    return { orgId: owner.org_id, providerId };
  };

  it(
    'finishes a sign-in whose callback is waiting on the IdP across the signal, stores every accepted prompt, exits 0, and the session works on the next instance',
    async () => {
      op = await startOidcOp({ startTimeoutMs: 90_000 });
      proxy = await holdingProxy(op.issuer, (req) => req.method === 'POST' && (req.url ?? '').startsWith('/token'));
      const tokenUrl = `${proxy.url}${new URL(op.tokenEndpoint).pathname}`;
      const s = await startService(db, { SHUTDOWN_GRACE_MS: String(GRACE_MS), SHUTDOWN_LISTEN_MS: String(LISTEN_MS), SSO_ALLOW_INSECURE_LOOPBACK_IDP: 'true' });
      services.push(s);
      const { orgId, providerId } = await registerProvider(op, tokenUrl);
      const publicUrl = process.env.PUBLIC_URL as string;
      await op.addClient({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${publicUrl}/api/v1/sso/callback`], token_endpoint_auth_method: 'client_secret_basic' });
      await op.setAccount('clinic-owner', { email: OWNER_EMAIL, email_verified: true, name: 'Clinic Owner' });
      const agents = await ingestAgents(db, 3);

      let signalledAt = 0;
      const load = sustainedIngest(s.port, agents, () => signalledAt > 0);
      await sleep(1500);

      // The sign-in, under load: login start, the IdP's round trip, then the callback, whose token request the proxy holds.
      const start = await send({ port: s.port, method: 'GET', path: `/api/v1/sso/login/${orgId}` });
      expect(start.status).toBe(302);
      const cookie = ([] as string[]).concat(start.headers['set-cookie'] ?? []).find((c) => c.startsWith('svc_sso_state='))!.split(';')[0];
      await op.loginAs('clinic-owner');
      const idpRedirect = new URL(await browserlessAuthorize(start.headers.location as string));
      let callbackAnswered = false;
      const callback = send({ port: s.port, method: 'GET', path: `${idpRedirect.pathname}${idpRedirect.search}`, headers: { cookie } }).finally(() => (callbackAnswered = true));
      await proxy.held;

      const acceptedBefore = load.accepted.length;
      signalledAt = Date.now();
      s.child.kill('SIGTERM');
      await sleep(200);
      const ready = await send({ port: s.port, method: 'GET', path: '/api/v1/health/ready' });
      // Past the listen window: the listener is closed and the callback alone is still in flight, waiting on the IdP.
      await sleep(LISTEN_MS + 500);
      const pendingAfterListener = !callbackAnswered;
      const refused = await send({ port: s.port, method: 'GET', path: '/api/v1/health' }).then(
        () => 'answered',
        (err: NodeJS.ErrnoException) => err.code,
      );
      proxy.release();
      const answer = await callback;
      await load.done;
      const exit = await s.exited;

      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body)).toMatchObject({ code: 'draining' });
      expect(pendingAfterListener).toBe(true);
      expect(refused).toBe('ECONNREFUSED');
      // The callback completed the sign-in: the browser is sent on with its exchange code, and the connection then closes.
      expect(answer.status).toBe(302);
      const code = /#ssoCode=([A-Za-z0-9_-]{43})$/.exec(answer.headers.location as string)?.[1];
      expect(code).toBeDefined();
      expect(answer.headers.connection).toBe('close');

      // Ingest went on after the signal; every answer was an acceptance or the device rate limit, and every acceptance is stored.
      expect(acceptedBefore).toBeGreaterThan(20);
      expect(load.accepted.length).toBeGreaterThan(acceptedBefore);
      expect(load.statuses.filter((x) => x !== 201 && x !== 429)).toEqual([]);
      expect(load.errors.every((e) => e === 'ECONNREFUSED' || e === 'ECONNRESET')).toBe(true);
      const [stored] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM elevation_requests WHERE id = ANY($1::uuid[])`, [load.accepted]);
      expect(Number(stored.n)).toBe(load.accepted.length);

      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(exit.at - signalledAt).toBeLessThan(GRACE_MS);
      expect(s.output()).not.toMatch(/"level":(50|60)/);
      const audit = await db.query<{ action: string }>(`SELECT action FROM audit_logs WHERE action = 'sso.login' AND details->>'providerId' = $1`, [providerId]);
      const sessions = await db.query<{ n: string }>(`SELECT count(*) AS n FROM sessions WHERE sso_provider_id = $1 AND auth_method = 'sso'`, [providerId]);
      expect({ audit: audit.length, sessions: Number(sessions[0].n) }).toEqual({ audit: 1, sessions: 1 });

      // The browser redeems the code at whichever instance serves next (a rolling restart): the session it names works.
      const next = await startService(db, { SHUTDOWN_GRACE_MS: String(GRACE_MS), SHUTDOWN_LISTEN_MS: String(LISTEN_MS), SSO_ALLOW_INSECURE_LOOPBACK_IDP: 'true' });
      services.push(next);
      const pair = await send({ port: next.port, method: 'POST', path: '/api/v1/sso/exchange', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
      expect(pair.status).toBe(200);
      const { accessToken } = JSON.parse(pair.body) as { accessToken: string };
      const me = await send({ port: next.port, method: 'GET', path: '/api/v1/auth/me', headers: { authorization: `Bearer ${accessToken}` } });
      expect(me.status).toBe(200);
      expect(JSON.parse(me.body)).toMatchObject({ user: { email: OWNER_EMAIL }, session: { scope: 'organization', orgId } });
      next.child.kill('SIGTERM');
      expect(await next.exited).toMatchObject({ code: 0 });
    },
    2 * BOOT_MS + 60_000,
  );
});
