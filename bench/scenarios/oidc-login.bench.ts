import { ChildProcess, fork } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, KeyLike, SignJWT } from 'jose';
import { SecretBoxService } from '../../src/infra/crypto/secret-box.service';
import { freePort } from '../../src/infra/database/embedded-postgres';
import { clientSecretContext } from '../../src/modules/sso/providers/sso-provider.types';
import { nodeArgs, type Scenario } from '../bench.types';

/**
 * Complete OIDC sign-ins per second, and this service's CPU milliseconds per sign-in.
 *
 * One sign-in is the browser's whole path: GET /sso/login/:orgId (302 and state cookie), the
 * IdP's authorization endpoint (302 back with a code), GET /sso/callback (token exchange, JWKS
 * verified ID token, UserInfo, account resolution, session and exchange code), and POST
 * /sso/exchange. The IdP is a small OP in this process (RS256 ID tokens, PKCE S256 checked), so
 * its cost does not count against the service.
 *
 * The IdP listens on http://127.0.0.1, which a production instance refuses to call. The
 * scenario therefore starts a sibling instance of the service on the same database and
 * secrets, with NODE_ENV=development and SSO_ALLOW_INSECURE_LOOPBACK_IDP=true, and reads that
 * process's CPU time from /proc/<pid>/stat. Each sign-in comes from its own client address
 * (X-Forwarded-For, trusted from loopback) so the per-client rate limits stay out of the way.
 */
const CONCURRENCY = 8;
const ACCOUNTS = 50;
const CLIENT_ID = 'bench-rp';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const CLOCK_TICKS_PER_SECOND = 100;

interface BenchOp {
  issuer: string;
  stop(): Promise<void>;
}

/** Just enough OpenID Provider for the relying party: auto-login round robin over the accounts. */
async function startBenchOp(emails: string[]): Promise<BenchOp> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { sub: string; nonce: string; challenge: string; redirectUri: string }>();
  const accessTokens = new Map<string, string>();
  let next = 0;
  let issuer = '';

  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
  const idToken = (sub: string, nonce: string, key: KeyLike) =>
    new SignJWT({ nonce, email: emails[Number(sub.slice(4))], email_verified: true, amr: ['pwd'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
      .setIssuer(issuer)
      .setAudience(CLIENT_ID)
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key);

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const code = randomBytes(24).toString('base64url');
      const redirectUri = url.searchParams.get('redirect_uri')!;
      codes.set(code, { sub: `acct${next++ % emails.length}`, nonce: url.searchParams.get('nonce')!, challenge: url.searchParams.get('code_challenge')!, redirectUri });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state')!);
      return res.writeHead(302, { location: back.toString() }).end();
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const form = new URLSearchParams(await readBody(req));
      const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString('utf8');
      const issued = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const pkceOk = !!issued && createHash('sha256').update(verifier).digest('base64url') === issued.challenge;
      if (basic !== `${CLIENT_ID}:${CLIENT_SECRET}` || !issued || !pkceOk || form.get('redirect_uri') !== issued.redirectUri) return json(res, 400, { error: 'invalid_grant' });
      const accessToken = randomBytes(24).toString('base64url');
      accessTokens.set(accessToken, issued.sub);
      return json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300, id_token: await idToken(issued.sub, issued.nonce, privateKey) });
    }
    if (req.method === 'GET' && url.pathname === '/userinfo') {
      const sub = accessTokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (!sub) return json(res, 401, { error: 'invalid_token' });
      accessTokens.delete((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      return json(res, 200, { sub, email: emails[Number(sub.slice(4))], email_verified: true, name: sub });
    }
    if (req.method === 'GET' && url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
    return json(res, 404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function startSibling(env: Record<string, string>): Promise<{ child: ChildProcess; baseUrl: string }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = fork(join(__dirname, '..', '..', 'src', 'main.js'), [], {
    env: { ...process.env, ...env, NODE_ENV: 'development', SSO_ALLOW_INSECURE_LOOPBACK_IDP: 'true', PORT: String(port), PUBLIC_URL: baseUrl },
    execArgv: nodeArgs(),
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the sibling service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${baseUrl}/api/v1/health`)).ok) return { child, baseUrl };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error('the sibling service did not start within 60 s');
}

/** User plus system CPU time of a process, in milliseconds. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5) (utime, stime); the slice starts at field 3.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

let clientCounter = 0;
function clientIp(): string {
  clientCounter++;
  return `10.${(clientCounter >> 16) & 255}.${(clientCounter >> 8) & 255}.${clientCounter & 255}`;
}

async function oneLogin(baseUrl: string, orgId: string): Promise<void> {
  const ip = clientIp();
  const start = await fetch(`${baseUrl}/api/v1/sso/login/${orgId}`, { redirect: 'manual', headers: { 'x-forwarded-for': ip } });
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0];
  if (start.status !== 302 || !cookie.startsWith('svc_sso_state=')) throw new Error(`login start answered ${start.status}`);
  const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  const back = new URL(authorize.headers.get('location')!);
  const callback = await fetch(`${baseUrl}${back.pathname}${back.search}`, { redirect: 'manual', headers: { cookie, 'x-forwarded-for': ip } });
  const code = /#ssoCode=(.+)$/.exec(callback.headers.get('location') ?? '')?.[1];
  if (!code) throw new Error(`callback refused the sign-in: ${callback.headers.get('location')}`);
  const exchange = await fetch(`${baseUrl}/api/v1/sso/exchange`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: JSON.stringify({ code }),
  });
  if (exchange.status !== 200) throw new Error(`exchange answered ${exchange.status}`);
  await exchange.json();
}

export const scenario: Scenario = {
  name: 'OIDC sign-in, complete browserless round trip (in-process IdP)',
  order: 50,
  async prepare(ctx) {
    const label = randomBytes(4).toString('hex');
    const emails = Array.from({ length: ACCOUNTS }, (_, i) => `user${i}@bench-${label}.example`);
    const ids = await ctx.seed({
      partners: [{ key: 'p', name: `Bench SSO Partner ${label}` }],
      organizations: [{ key: 'o', partner: 'p', name: `Bench SSO Org ${label}` }],
      roles: [
        { key: 'r', scope: 'organization', organization: 'o', name: 'Member', permissions: ['devices:read'] },
        { key: 'admin', scope: 'organization', organization: 'o', name: 'Administrator', permissions: ['*'] },
      ],
      users: [
        ...emails.map((email, i) => ({ key: `u${i}`, email, memberships: [{ organization: 'o', role: 'r' }] })),
        // Whoever configures a provider must cover the accounts it signs in (docs/security.md).
        { key: 'configurer', email: `admin@bench-${label}.example`, memberships: [{ organization: 'o', role: 'admin' }] },
      ],
    });
    const op = await startBenchOp(emails);
    const providerId = randomUUID();
    // Sealed as the service seals it: the in-process app shares the service's encryption key.
    const sealed = ctx.app.get(SecretBoxService).encrypt(CLIENT_SECRET, clientSecretContext(providerId));
    await ctx.ownerQuery(
      `INSERT INTO sso_providers (id, org_id, name, type, status, issuer, client_id, client_secret, authorization_url, token_url, userinfo_url, jwks_url, auto_provision, created_by)
       VALUES ($1, $2, 'Bench IdP', 'oidc', 'active', $3, $4, $5, $6, $7, $8, $9, false, $10)`,
      [providerId, ids.o, op.issuer, CLIENT_ID, sealed, `${op.issuer}/authorize`, `${op.issuer}/token`, `${op.issuer}/userinfo`, `${op.issuer}/jwks`, ids.configurer],
    );
    const sibling = await startSibling(ctx.serviceEnv);
    try {
      // Warm-up: every account signs in once (identity links created, JWKS cached, JIT paths compiled).
      for (let i = 0; i < ACCOUNTS; i++) await oneLogin(sibling.baseUrl, ids.o);

      const cpuBefore = cpuMs(sibling.child.pid!);
      const started = Date.now();
      const until = started + ctx.durationSeconds * 1000;
      let completed = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (Date.now() < until) {
            await oneLogin(sibling.baseUrl, ids.o);
            completed++;
          }
        }),
      );
      const seconds = (Date.now() - started) / 1000;
      const cpu = cpuMs(sibling.child.pid!) - cpuBefore;
      return {
        kind: 'custom',
        rows: [
          { scenario: `OIDC sign-ins per second (${CONCURRENCY} concurrent browsers, ${completed} sign-ins)`, value: Math.round(completed / seconds), unit: 'sign-ins/s' },
          { scenario: 'OIDC sign-in: service CPU per complete sign-in (start, callback, exchange)', value: Math.round((cpu / completed) * 100) / 100, unit: 'CPU ms' },
        ],
      };
    } finally {
      // Waits for the exit, so that a CPU profile (BENCH_CPU_PROFILE) is written before the run ends.
      const exited = new Promise((r) => sibling.child.once('exit', r));
      sibling.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      await op.stop();
    }
  },
};
