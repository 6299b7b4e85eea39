/**
 * Tracing end to end (docs/operations.md, "Traces"): one OIDC sign-in against a real OpenID
 * Provider, through the service running with tracing on and exporting to a stand-in collector.
 *
 * Why the service runs in a child process: OpenTelemetry's instrumentations patch Express and pg
 * when Node's module loader loads them, and a jest worker loads modules with a loader of its own,
 * which they never see (only core http would be traced). So the service runs as in production, in a
 * process whose entry imports the tracing module first (traced-instance.main.ts), configured by
 * OTEL_EXPORTER_OTLP_ENDPOINT alone, exporting over OTLP/HTTP to a collector this file runs
 * (otlp-collector.ts): no test-only exporter, so the exporter, the batching and the shutdown flush
 * are the ones production uses. Spans are batched, so everything is read after the instance was
 * stopped with SIGTERM, whose graceful stop exports what is still buffered.
 *
 * The IdP's token, UserInfo and JWKS endpoints are reached through a forwarder in this file that
 * records the headers the service sent (the outbound `traceparent`). The instance runs with
 * NODE_ENV=development because the test environment writes no request lines; its standard output
 * is a pipe, so its logs are JSON.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../../../src/infra/database/embedded-postgres';
import { tenantFixture } from '../../factories/tenant.factory';
import { browserlessAuthorize, type OidcOpHandle } from '../../support/idp/oidc-op';
import { startTestApp } from '../../support/test-app';
import { exchangeCodeOf, freshIp, insertProvider, OP_CLIENT_SECRET, opEndpoints, registerWithOp, startOp, verifyDomain } from '../sso-login/sso-login.kit';
import { SPAN_KIND, startOtlpCollector, type CollectedSpan, type OtlpCollector } from './otlp-collector';

const ROOT = join(__dirname, '../../..');
/** Seeding in-process, the OP child, and the service booting through ts-node, on a busy two-core machine. */
const SETUP_TIMEOUT_MS = 300_000;
const READY_TIMEOUT_MS = 180_000;

/** The caller's trace that the login start continues: W3C ids, sampled. */
const CALLER_TRACE_ID = randomBytes(16).toString('hex');
const CALLER_SPAN_ID = randomBytes(8).toString('hex');
const START_REQUEST_ID = `trace-start-${randomBytes(4).toString('hex')}`;
const CALLBACK_REQUEST_ID = `trace-callback-${randomBytes(4).toString('hex')}`;
const EXCHANGE_REQUEST_ID = `trace-exchange-${randomBytes(4).toString('hex')}`;

interface Forwarded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** Forwards every request to `target` as it came (path, method, headers, body) and records it. */
async function startForwarder(target: string): Promise<{ url: string; requests: Forwarded[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const requests: Forwarded[] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

interface TracedInstance {
  baseUrl: string;
  output(): string;
  /** SIGTERM, then the exit code (or signal) once the process has exited. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

async function startTracedInstance(env: Record<string, string>): Promise<TracedInstance> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', join(__dirname, 'traced-instance.main.ts')], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', START_JOBS: 'false', SHUTDOWN_LISTEN_MS: '0', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const baseUrl = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) {
      await exited;
      throw new Error(`the traced instance exited with ${child.exitCode} before it was ready:\n${(stdout + stderr).slice(-4000)}`);
    }
    const ready = await fetch(`${baseUrl}/api/v1/health/ready`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (Date.now() - started > READY_TIMEOUT_MS) {
      child.kill('SIGKILL');
      throw new Error(`the traced instance was not ready within ${READY_TIMEOUT_MS / 1000} s:\n${(stdout + stderr).slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    baseUrl,
    output: () => stdout,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

describe('tracing (OpenTelemetry, OTLP/HTTP) of an OIDC sign-in', () => {
  let collector: OtlpCollector;
  let forwarder: Awaited<ReturnType<typeof startForwarder>>;
  let op: OidcOpHandle;
  let instance: TracedInstance | undefined;
  let stopped: { code: number | null; signal: NodeJS.Signals | null };
  let ids: Record<string, string>;
  let email: string;
  /** Values that must appear in no span: what a sign-in carries in its URLs, bodies and answers. */
  let secrets: Record<string, string>;
  let logLines: Record<string, unknown>[];

  beforeAll(async () => {
    collector = await startOtlpCollector();
    const [seeder, startedOp] = await Promise.all([startTestApp(), startOp()]);
    op = startedOp;
    try {
      await registerWithOp(op);
      forwarder = await startForwarder(op.issuer);
      const f = tenantFixture();
      ids = await seeder.seed(f);
      email = f.emails.adminA;
      await verifyDomain(ids.orgA, email.split('@')[1]);
      const via = (url: string) => `${forwarder.url}${new URL(url).pathname}`;
      await insertProvider(seeder, { orgId: ids.orgA, name: 'Traced IdP', ...opEndpoints(op), tokenUrl: via(op.tokenEndpoint), userInfoUrl: via(op.userinfoEndpoint), jwksUrl: via(op.jwksUrl) });
    } finally {
      await seeder.close();
    }
    instance = await startTracedInstance({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const base = instance.baseUrl;

    await op.setAccount('traced-admin', { email, email_verified: true, name: 'Admin A' });
    await op.loginAs('traced-admin');
    const start = await fetch(`${base}/api/v1/sso/login/${ids.orgA}?redirect=/devices`, {
      redirect: 'manual',
      headers: { traceparent: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01`, 'x-request-id': START_REQUEST_ID, 'x-forwarded-for': freshIp() },
    });
    expect(start.status).toBe(302);
    const stateCookie = (start.headers.getSetCookie().find((c) => c.startsWith('svc_sso_state=')) ?? '').split(';')[0];
    const idpRedirect = new URL(await browserlessAuthorize(start.headers.get('location')!));
    const callback = await fetch(`${base}/api/v1/sso/callback${idpRedirect.search}`, {
      redirect: 'manual',
      headers: { cookie: stateCookie, 'x-request-id': CALLBACK_REQUEST_ID },
    });
    expect(callback.status).toBe(302);
    const exchangeCode = exchangeCodeOf(callback.headers.get('location') ?? '');
    expect(exchangeCode).not.toBeNull();
    const exchange = await fetch(`${base}/api/v1/sso/exchange`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': EXCHANGE_REQUEST_ID, 'x-forwarded-for': freshIp() },
      body: JSON.stringify({ code: exchangeCode }),
    });
    expect(exchange.status).toBe(200);
    const pair = (await exchange.json()) as { accessToken: string; refreshToken: string };
    secrets = {
      email,
      'email (lower case)': email.toLowerCase(),
      'organization id': ids.orgA,
      'user id': ids.adminA,
      'client secret': OP_CLIENT_SECRET,
      'authorization code': idpRedirect.searchParams.get('code')!,
      state: idpRedirect.searchParams.get('state')!,
      'state cookie': stateCookie.split('=')[1],
      'exchange code': exchangeCode!,
      'access token': pair.accessToken,
      'refresh token': pair.refreshToken,
      'redirect target': '/devices',
    };

    stopped = await instance.stop();
    logLines = instance
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    instance?.kill();
    await Promise.all([collector?.close(), forwarder?.close(), op?.stop()]);
  });

  const serverSpan = (route: RegExp): CollectedSpan => {
    const found = collector.spans.filter((s) => s.kind === SPAN_KIND.server && route.test(s.name));
    expect(found).toHaveLength(1);
    return found[0];
  };
  const traceOf = (span: CollectedSpan) => collector.spans.filter((s) => s.traceId === span.traceId);
  /** Whether `span` descends from `root` through its parents. */
  const descends = (span: CollectedSpan, root: CollectedSpan): boolean => {
    const byId = new Map(traceOf(root).map((s) => [s.spanId, s]));
    for (let at: CollectedSpan | undefined = span; at; at = byId.get(at.parentSpanId)) if (at.spanId === root.spanId) return true;
    return false;
  };
  const statements = (spans: CollectedSpan[]) => spans.filter((s) => s.scope === '@opentelemetry/instrumentation-pg' && typeof s.attributes['db.query.text'] === 'string');
  const linesOf = (requestId: string) => logLines.filter((l) => l.reqId === requestId || (l.req as { id?: unknown } | undefined)?.id === requestId);

  it('stops on SIGTERM with exit status 0 and exports the spans still buffered, the last request included', () => {
    expect(stopped).toEqual({ code: 0, signal: null });
    const exchange = serverSpan(/^POST \/api\/v1\/sso\/exchange$/);
    expect(statements(traceOf(exchange)).length).toBeGreaterThan(0);
    expect(collector.spans.every((s) => s.resource['service.name'] === 'rmm-identity-pam')).toBe(true);
  });

  it('names each request span by its route template, never by the path with its ids', () => {
    expect(serverSpan(/^GET \/api\/v1\/sso\/login\//).name).toMatch(/^GET \/api\/v1\/sso\/login\/:[A-Za-z]+$/);
    const callback = serverSpan(/^GET \/api\/v1\/sso\/callback$/);
    expect(callback.attributes['http.route']).toBe('/api/v1/sso/callback');
    expect(callback.attributes['http.response.status_code']).toBe(302);
    expect(collector.spans.filter((s) => s.name.includes(ids.orgA))).toEqual([]);
  });

  it('puts the callback, its SQL statements and its calls to the IdP (token endpoint, keys) in one trace', () => {
    const callback = serverSpan(/^GET \/api\/v1\/sso\/callback$/);
    const trace = traceOf(callback);
    const sql = statements(trace);
    expect(sql.length).toBeGreaterThanOrEqual(3);
    const outbound = trace.filter((s) => s.kind === SPAN_KIND.client && s.scope === '@opentelemetry/instrumentation-http');
    const token = outbound.filter((s) => s.attributes['url.full'] === `${forwarder.url}${new URL(op.tokenEndpoint).pathname}`);
    expect(token).toHaveLength(1);
    expect(token[0].attributes['http.request.method']).toBe('POST');
    expect(token[0].attributes['http.response.status_code']).toBe(200);
    expect(outbound.map((s) => s.attributes['url.full'])).toContain(`${forwarder.url}${new URL(op.jwksUrl).pathname}`);
    for (const span of [...sql, ...outbound]) expect(descends(span, callback)).toBe(true);
    // The trace is the callback's own: it began with this request.
    expect(callback.parentSpanId).toBe('');
  });

  it('sends a traceparent on outbound calls, naming the span that times the call', () => {
    const callback = serverSpan(/^GET \/api\/v1\/sso\/callback$/);
    const tokenPath = new URL(op.tokenEndpoint).pathname;
    const sent = forwarder.requests.filter((r) => r.method === 'POST' && r.path === tokenPath);
    expect(sent).toHaveLength(1);
    const [, traceId, parentId, flags] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(String(sent[0].headers.traceparent))!;
    expect(traceId).toBe(callback.traceId);
    expect(flags).toBe('01');
    const clientSpan = collector.spans.find((s) => s.spanId === parentId)!;
    expect(clientSpan).toMatchObject({ kind: SPAN_KIND.client, attributes: expect.objectContaining({ 'url.full': `${forwarder.url}${tokenPath}` }) });
  });

  it("continues the caller's trace when a request arrives with a traceparent", () => {
    const start = serverSpan(/^GET \/api\/v1\/sso\/login\//);
    expect(start.traceId).toBe(CALLER_TRACE_ID);
    expect(start.parentSpanId).toBe(CALLER_SPAN_ID);
    const sql = statements(traceOf(start));
    expect(sql.length).toBeGreaterThan(0);
    for (const span of sql) expect(descends(span, start)).toBe(true);
  });

  it('records statements with their values replaced, URLs without query strings, and no secret, email or id in any span', () => {
    const everything = JSON.stringify(collector.bodies);
    for (const [what, value] of Object.entries(secrets)) {
      expect({ what, found: everything.includes(value) }).toEqual({ what, found: false });
    }
    const keys = new Set(collector.spans.flatMap((s) => [...Object.keys(s.attributes), ...s.events.flatMap((e) => Object.keys(e.attributes))]));
    for (const key of ['url.query', 'url.path', 'http.target', 'db.postgresql.values', 'exception.message']) expect(keys).not.toContain(key);
    for (const s of collector.spans) if (typeof s.attributes['url.full'] === 'string') expect(s.attributes['url.full']).not.toMatch(/[?#]/);
    // The transaction's opening message inlines its first statement's values; the span shows where they stood.
    const opening = statements(collector.spans).map((s) => String(s.attributes['db.query.text'])).filter((t) => t.includes('set_config'));
    expect(opening.length).toBeGreaterThan(0);
    for (const text of opening) expect(text).not.toMatch(/'/);
  });

  it('writes the trace and span ids into every log line of a traced request', () => {
    const callback = serverSpan(/^GET \/api\/v1\/sso\/callback$/);
    const callbackLines = linesOf(CALLBACK_REQUEST_ID);
    expect(callbackLines.map((l) => l.msg)).toContain('request completed');
    for (const line of callbackLines) expect(line).toMatchObject({ trace_id: callback.traceId, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    const startLines = linesOf(START_REQUEST_ID);
    expect(startLines.length).toBeGreaterThan(0);
    for (const line of startLines) expect(line.trace_id).toBe(CALLER_TRACE_ID);
    // Lines outside any request (the start, the stop) carry none.
    expect(logLines.find((l) => String(l.msg).startsWith('SIGTERM'))).not.toHaveProperty('trace_id');
  });

  it('leaves readiness probes untraced', () => {
    expect(collector.spans.filter((s) => s.name.includes('/health'))).toEqual([]);
    expect(collector.spans.filter((s) => s.kind === SPAN_KIND.server).map((s) => s.name).sort()).toEqual(
      [serverSpan(/^GET \/api\/v1\/sso\/login\//).name, 'GET /api/v1/sso/callback', 'POST /api/v1/sso/exchange'].sort(),
    );
  });
});
