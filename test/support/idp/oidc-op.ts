/**
 * A real OpenID Provider for tests: oidc-provider 9 on 127.0.0.1 with a random port, RS256
 * ID tokens, Authorization Code only, PKCE S256 required. oidc-provider is ESM-only, which
 * jest's CommonJS runtime cannot load, so it runs in a child process (oidc-op.child.mjs)
 * driven over IPC.
 *
 *   const op = await startOidcOp();
 *   await op.addClient({ client_id: 'rmm', client_secret: 's3cret', redirect_uris: [`${base}/api/v1/sso/callback`] });
 *   await op.setAccount('ann', { email: 'ann@customer-a.example', email_verified: true, name: 'Ann' }, { amr: ['pwd', 'mfa'] });
 *   await op.loginAs('ann');
 *   const callbackUrl = await browserlessAuthorize(authUrlFromTheService);   // …/callback?code=…&state=…
 *   …
 *   await op.stop();   // in afterAll: a running child keeps jest from exiting
 *
 * Scopes: openid profile email groups (and offline_access). Claims: email, email_verified (scope
 * email), name, given_name, family_name (profile), groups (groups). By default the ID token
 * carries the granted scopes' claims as well as userinfo (`conformIdTokenClaims: true` leaves
 * only sub and the protocol claims in it). The ID token's `amr` (and `acr`) come from the
 * account, so MFA trust (spec 1.7) can be tested either way.
 *
 * Two ways through the login:
 * - browserless: `loginAs(sub)` makes the next interaction complete for that account with no
 *   UI (login and consent to everything requested); `browserlessAuthorize` follows the
 *   redirects with a cookie jar until the OP sends the browser back to the relying party.
 * - a real browser: oidc-provider's devInteractions login form. Type a `sub` given to
 *   setAccount() as the login, any password; consent is granted with the login.
 * The issuer is plain http on loopback, so the service needs SSO_ALLOW_INSECURE_LOOPBACK_IDP.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { CookieJar } from './cookie-jar';

export interface OidcOpOptions {
  /** Keep only sub and protocol claims in the ID token, as strict OIDC conformance does. */
  conformIdTokenClaims?: boolean;
  /** Mirror the child's output to this process's stderr (it is otherwise kept for error messages). */
  verbose?: boolean;
  startTimeoutMs?: number;
}

export interface OidcOpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  /** Defaults to client_secret_basic, the OIDC default; set client_secret_post for RPs that send the secret in the body. */
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
  /** Any other client metadata oidc-provider understands (grant_types, post_logout_redirect_uris, …). */
  [metadata: string]: unknown;
}

export interface OidcOpAccountOptions {
  /** RFC 8176 values for the ID token's amr. Defaults to ['pwd']; null leaves amr out. */
  amr?: string[] | null;
  acr?: string;
}

export interface OidcOpHandle {
  /** `http://127.0.0.1:<port>`; discovery at `${issuer}/.well-known/openid-configuration`. */
  issuer: string;
  discoveryUrl: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string;
  jwksUrl: string;
  /** Registers a confidential client, or replaces one with the same client_id. */
  addClient(client: OidcOpClient): Promise<void>;
  /** Creates or replaces an account; `claims` are served as they are (sub is always `sub`). */
  setAccount(sub: string, claims: Record<string, unknown>, options?: OidcOpAccountOptions): Promise<void>;
  /** The next authorization interaction completes for `sub` without UI. */
  loginAs(sub: string): Promise<void>;
  /** `${issuer}/session/end`: RP-initiated logout (oidc-provider's route). */
  endSessionEndpoint: string;
  /** Signs `claims` as a JWT with the OP's own RS256 key (forged tokens that still verify); `header` adds to or overrides the JOSE header. */
  signJwt(claims: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
  /** The back-channel logouts the OP sent since the last call, with whether the relying party answered 200. */
  backchannelResults(): Promise<{ clientId: string; sub: string; sid: string; ok: boolean; error?: string }[]>;
  /** The child's recent stdout/stderr, for diagnosing a failing test. */
  logs(): string;
  stop(): Promise<void>;
}

interface Reply {
  type: 'reply';
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

type ChildMessage = { type: 'ready'; issuer: string } | Reply;

const MAX_LOG_CHARS = 20_000;

export async function startOidcOp(options: OidcOpOptions = {}): Promise<OidcOpHandle> {
  const child = fork(join(__dirname, 'oidc-op.child.mjs'), [JSON.stringify({ conformIdTokenClaims: options.conformIdTokenClaims })], {
    // The parent may run under ts-node or jest loaders the plain-ESM child must not inherit.
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });

  let output = '';
  const record = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-MAX_LOG_CHARS);
    if (options.verbose) {
      process.stderr.write(chunk);
    }
  };
  child.stdout!.on('data', record);
  child.stderr!.on('data', record);

  const issuer = await waitForReady(child, options.startTimeoutMs ?? 15_000, () => output);

  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  child.on('message', (message: ChildMessage) => {
    if (message.type !== 'reply') {
      return;
    }
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.ok) {
      waiter?.resolve(message.result);
    } else {
      waiter?.reject(new Error(`test OP: ${message.error}`));
    }
  });
  child.on('exit', (code, signal) => {
    for (const waiter of pending.values()) {
      waiter.reject(new Error(`test OP exited (code ${code}, signal ${signal})\n${output}`));
    }
    pending.clear();
  });

  const call = (name: string, ...args: unknown[]): Promise<unknown> => {
    if (child.exitCode !== null || child.signalCode !== null || !child.connected) {
      return Promise.reject(new Error('test OP is not running'));
    }
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      child.send({ type: 'command', id, name, args });
    });
  };

  return {
    issuer,
    // oidc-provider's default routes; discovery at discoveryUrl says the same.
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    authorizationEndpoint: `${issuer}/auth`,
    tokenEndpoint: `${issuer}/token`,
    userinfoEndpoint: `${issuer}/me`,
    jwksUrl: `${issuer}/jwks`,
    endSessionEndpoint: `${issuer}/session/end`,
    signJwt: async (claims, header) => (await call('signJwt', claims, header ?? {})) as string,
    backchannelResults: async () => (await call('backchannelResults')) as { clientId: string; sub: string; sid: string; ok: boolean; error?: string }[],
    addClient: async (client) => {
      await call('addClient', client);
    },
    setAccount: async (sub, claims, accountOptions = {}) => {
      await call('setAccount', sub, claims, accountOptions);
    },
    loginAs: async (sub) => {
      await call('loginAs', sub);
    },
    logs: () => output,
    stop: () => stopChild(child),
  };
}

/**
 * Follows an authorization request the way a browser would (302/303 redirects, cookies kept
 * in `jar`) through the OP's auto-login, and returns the first URL that points back at the
 * relying party's redirect_uri: `…?code=…&state=…`, or `…?error=…` when the OP refused.
 * `authUrl` may also be the service's own login route; the redirect_uri is then taken from the
 * first hop that carries one. Pass a jar to keep the cookies the service set (its state cookie).
 */
export async function browserlessAuthorize(
  authUrl: string,
  options: { jar?: CookieJar; redirectUri?: string; maxRedirects?: number } = {},
): Promise<string> {
  const jar = options.jar ?? new CookieJar();
  let url = new URL(authUrl);
  let target = options.redirectUri ?? url.searchParams.get('redirect_uri') ?? undefined;

  for (let hop = 0; hop <= (options.maxRedirects ?? 20); hop++) {
    if (target && pointsAt(url, target)) {
      return url.toString();
    }
    const response = await fetch(url, { redirect: 'manual', headers: jar.requestHeaders(url) });
    jar.storeFrom(url, response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      url = new URL(location, url);
      target ??= url.searchParams.get('redirect_uri') ?? undefined;
      continue;
    }
    const body = (await response.text()).replace(/\s+/g, ' ').slice(0, 500);
    const hint = url.pathname.startsWith('/interaction/') ? ' (the OP wants a login: call loginAs(sub) first)' : '';
    throw new Error(`authorization stopped at ${response.status} ${url}${hint}: ${body}`);
  }
  throw new Error(`authorization did not return to ${target ?? 'the relying party'} within ${options.maxRedirects ?? 20} redirects`);
}

/**
 * Completes an RP-initiated logout the way a browser would: follows `endSessionUrl` (the OP's
 * end-session endpoint with the relying party's parameters) with the jar that holds the OP
 * session, submits the OP's logout confirmation form (which ends the OP session and sends the
 * back-channel logouts), and returns the URL the OP sends the browser back to
 * (`post_logout_redirect_uri?state=…`), or the OP's own success page URL when none was given.
 */
export async function browserlessEndSession(endSessionUrl: string, jar: CookieJar): Promise<string> {
  const url = new URL(endSessionUrl);
  const page = await fetch(url, { redirect: 'manual', headers: jar.requestHeaders(url) });
  jar.storeFrom(url, page);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`end session answered ${page.status}: ${html.slice(0, 300)}`);
  const action = /action="([^"]+)"/.exec(html)?.[1];
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !xsrf) throw new Error(`no logout form in the OP's page: ${html.slice(0, 300)}`);
  const confirmUrl = new URL(action, url);
  const confirmed = await fetch(confirmUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...jar.requestHeaders(confirmUrl), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ xsrf, logout: 'yes' }),
  });
  jar.storeFrom(confirmUrl, confirmed);
  await confirmed.body?.cancel();
  const location = confirmed.headers.get('location');
  if (confirmed.status < 300 || confirmed.status >= 400 || !location) throw new Error(`logout confirmation answered ${confirmed.status}`);
  return new URL(location, confirmUrl).toString();
}

function pointsAt(url: URL, redirectUri: string): boolean {
  const target = new URL(redirectUri);
  return url.origin === target.origin && url.pathname === target.pathname;
}

function waitForReady(child: ChildProcess, timeoutMs: number, logs: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string): void => {
      cleanup();
      child.kill('SIGKILL');
      reject(new Error(`test OP did not start: ${reason}\n${logs()}`));
    };
    const onMessage = (message: ChildMessage): void => {
      if (message.type === 'ready') {
        cleanup();
        resolve(message.issuer);
      }
    };
    const onExit = (code: number | null): void => fail(`exited with code ${code}`);
    const onError = (err: Error): void => fail(err.message);
    const timer = setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', onError);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
    child.on('error', onError);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.connected) {
      child.send({ type: 'command', id: 0, name: 'stop', args: [] });
    } else {
      child.kill('SIGTERM');
    }
  });
}
