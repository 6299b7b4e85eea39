// A real OpenID Provider (oidc-provider 9, ESM only) run as a child process of a test, which
// drives it over IPC. Started by startOidcOp() in oidc-op.ts; see that file for the protocol
// and for what each command does.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { SignJWT, importJWK } from 'jose';
import Provider from 'oidc-provider';

const options = JSON.parse(process.argv[2] ?? '{}');

/** sub -> { claims, amr, acr } */
const accounts = new Map();
/** Set by loginAs(): the next interaction completes for this account with no UI. */
let pendingLoginSub = null;

const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-op-rs256', alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  pkce: { required: () => true },
  responseTypes: ['code'],
  scopes: ['openid', 'offline_access', 'profile', 'email', 'groups'],
  // amr, acr and auth_time sit in the openid scope so that every ID token carries them when the
  // login set them; as standalone claims oidc-provider would emit them only when requested.
  claims: {
    openid: ['sub', 'amr', 'acr', 'auth_time'],
    sid: null,
    iss: null,
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name'],
    groups: ['groups'],
  },
  enabledJWA: { idTokenSigningAlgValues: ['RS256'] },
  // Like Entra ID or Google, put the scope's claims in the ID token too, not only in userinfo.
  conformIdTokenClaims: options.conformIdTokenClaims ?? false,
  // RP-initiated logout is on by default; back-channel logout posts a logout token to every
  // client of the ended OP session that registered a backchannel_logout_uri.
  features: { devInteractions: { enabled: true }, backchannelLogout: { enabled: true } },
  // oidc-provider refuses outgoing requests to special-use addresses (SSRF protection); the service under
  // test listens on loopback, so the test OP's back-channel logouts go out without that dispatcher.
  fetch: (url, { dispatcher, ...options }) => globalThis.fetch(url, options),
  async findAccount(ctx, sub) {
    const account = accounts.get(sub);
    if (!account) {
      return undefined;
    }
    return { accountId: sub, claims: async () => ({ ...account.claims, sub }) };
  },
});

// Runs before the provider's own routes (Provider#use inserts ahead of its router). The dev
// interaction pages still render the login form for a real browser; only their submission,
// and auto-login after loginAs(), are handled here, so that the account's amr and acr reach
// the ID token (the built-in dev submit records only the account id).
provider.use(async (ctx, next) => {
  if (!/^\/interaction\/[^/]+$/.test(ctx.path) || !(ctx.method === 'POST' || (ctx.method === 'GET' && pendingLoginSub))) {
    return next();
  }
  let details;
  try {
    details = await provider.interactionDetails(ctx.req, ctx.res);
  } catch (err) {
    ctx.status = 400;
    ctx.body = `test OP: no interaction session (${err.message})`;
    return undefined;
  }

  let result;
  if (ctx.method === 'GET') {
    result = await loginAndConsent(details, pendingLoginSub);
    pendingLoginSub = null;
  } else {
    const form = new URLSearchParams(await readBody(ctx.req));
    if (form.get('prompt') === 'login') {
      const sub = form.get('login') ?? '';
      result = accounts.has(sub)
        ? await loginAndConsent(details, sub)
        : { error: 'access_denied', error_description: `unknown test account ${sub}; call setAccount() first` };
    } else {
      result = await consent(details);
    }
  }
  ctx.respond = false;
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
  return undefined;
});

/** The outcome of each back-channel logout the OP sent: { clientId, sid, ok, error }. */
const backchannelResults = [];
provider.on('backchannel.success', (ctx, client, accountId, sid) => backchannelResults.push({ clientId: client.clientId, sub: accountId, sid, ok: true }));
provider.on('backchannel.error', (ctx, err, client, accountId, sid) => backchannelResults.push({ clientId: client.clientId, sub: accountId, sid, ok: false, error: err.message }));

server.on('request', provider.callback());

/** Signs in and grants everything the request asked for, so no consent page follows. */
async function loginAndConsent(details, sub) {
  const { params } = details;
  const grant = new provider.Grant({ accountId: sub, clientId: params.client_id });
  grant.addOIDCScope(params.scope);
  if (params.claims) {
    const requested = JSON.parse(params.claims);
    grant.addOIDCClaims([...Object.keys(requested.id_token ?? {}), ...Object.keys(requested.userinfo ?? {})]);
  }
  const { amr, acr } = accounts.get(sub);
  return {
    login: { accountId: sub, ...(amr ? { amr } : {}), ...(acr ? { acr } : {}) },
    consent: { grantId: await grant.save() },
  };
}

/** The dev consent page's submission: grant what the prompt reports missing. */
async function consent(details) {
  const { prompt, grantId, session, params } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (prompt.details.missingOIDCScope) {
    grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
  }
  if (prompt.details.missingOIDCClaims) {
    grant.addOIDCClaims(prompt.details.missingOIDCClaims);
  }
  return { consent: { grantId: await grant.save() } };
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const commands = {
  async addClient(metadata) {
    const client = {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      ...metadata,
    };
    await provider.Client.validate(client);
    await provider.Client.adapter.upsert(client.client_id, client);
  },
  async setAccount(sub, claims, { amr = ['pwd'], acr } = {}) {
    accounts.set(sub, { claims: claims ?? {}, amr, acr });
  },
  async backchannelResults() {
    return backchannelResults.splice(0);
  },
  async loginAs(sub) {
    if (!accounts.has(sub)) {
      throw new Error(`unknown test account ${sub}; call setAccount() first`);
    }
    pendingLoginSub = sub;
  },
  /** Signs arbitrary claims with the OP's own key (forged logout tokens that still verify). */
  async signJwt(claims, header = {}) {
    const key = await importJWK(signingKey, 'RS256');
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: signingKey.kid, ...header }).sign(key);
  },
  async stop() {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    setImmediate(() => process.exit(0));
  },
};

process.on('message', async (message) => {
  if (message?.type !== 'command') {
    return;
  }
  try {
    const handler = commands[message.name];
    if (!handler) {
      throw new Error(`unknown command ${message.name}`);
    }
    const result = await handler(...(message.args ?? []));
    process.send({ type: 'reply', id: message.id, ok: true, result });
  } catch (err) {
    const error = err.error_description ? `${err.message}: ${err.error_description}` : (err.message ?? String(err));
    process.send({ type: 'reply', id: message.id, ok: false, error });
  }
});

// The parent died or stopped listening: never outlive it.
process.on('disconnect', () => process.exit(0));

process.send({ type: 'ready', issuer });
