import { randomUUID } from 'node:crypto';
import { tenantFixture } from '../../factories/tenant.factory';
import { startTestApp, type TestApp } from '../../support/test-app';
import {
  fieldValues,
  HTTP_METHODS,
  LEAK,
  OTHER_BODIES,
  PATH_VALUES,
  queryValues,
  resolve,
  sample,
  serialise,
  WRONG_TYPES,
  wholeBodies,
  type Ids,
  type OpenApiDoc,
  type Operation,
  type Value,
} from './campaign.kit';

/**
 * Issue 18, part 3: a bad-input campaign generated from the served OpenAPI document, so a route
 * is covered the day it is documented. For every operation: its baseline with credentials of
 * every kind, and with rotating valid credentials (organization administrator, partner
 * technician, API key; the agent token on agent routes) every documented field set to wrong
 * types, boundary lengths, huge numbers, NUL and control characters, prototype keys and deep
 * nesting; whole bodies with prototype, empty and duplicate keys, invalid UTF-8, nesting and
 * non-objects; wrong content types and encodings; path parameters that are not ids; query
 * parameters of every wrong kind. Every answer: no 5xx, errors in the project's shape, no
 * library or SQL text; the service healthy afterwards.
 */

type Kind = 'admin' | 'tech' | 'techA' | 'apiKey' | 'reader' | 'agent' | 'none';

interface Probe {
  op: string;
  label: string;
  kind: Kind;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

interface Violation {
  op: string;
  label: string;
  kind: Kind;
  status: number;
  problem: string;
  body: string;
}

const CONCURRENCY = 8;

describe('bad-input campaign over the served OpenAPI document', () => {
  let t: TestApp;
  let doc: OpenApiDoc;
  let ids: Record<string, string>;
  let agent: { id: string; token: string };
  const auth: Partial<Record<Kind, string>> = {};
  const created: Record<string, string> = {};
  let sent = 0;
  const statuses: Record<number, number> = {};
  let address = 0;

  beforeAll(async () => {
    t = await startTestApp({}, { listen: true });
    const fx = tenantFixture();
    ids = await t.seed(fx);
    const device = fx.devices!.find((d) => d.key === 'deviceA1')!;
    agent = { id: device.agentId!, token: device.agentToken! };
    auth.admin = `Bearer ${await t.token(ids.adminA, { mfa: true })}`;
    auth.tech = `Bearer ${await t.token(ids.tech, { mfa: true })}`;
    auth.techA = `Bearer ${await t.token(ids.techA, { mfa: true })}`;
    auth.reader = `Bearer ${await t.token(ids.readerA, { mfa: true })}`;
    auth.agent = `Bearer ${agent.token}`;
    const key = await call({ method: 'POST', path: '/api/v1/api-keys', kind: 'admin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'campaign', permissions: ['*'], mfaSatisfied: true }) });
    if (key.status !== 201) throw new Error(`API key: ${key.status} ${key.text}`);
    auth.apiKey = `Bearer ${JSON.parse(key.text).key}`;
    const served = await fetch(`${t.baseUrl}/api/docs-json`);
    doc = (await served.json()) as OpenApiDoc;
  }, 60_000);
  afterAll(() => t.close());

  /** One request from a client address of its own, so per-address rate limits do not hide the routes behind them. */
  async function call(p: Omit<Probe, 'op' | 'label'>): Promise<{ status: number; text: string; type: string }> {
    sent++;
    address++;
    const headers: Record<string, string> = { 'x-forwarded-for': `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}`, ...p.headers };
    // Signing out ends the session it is sent with: each sign-out gets a session of its own.
    const signOut = p.path.split('?')[0].endsWith('/auth/logout') && p.kind !== 'none' && p.kind !== 'agent';
    const credential = signOut ? `Bearer ${await t.token(ids.adminA, { mfa: true })}` : auth[p.kind];
    if (credential) headers.authorization = credential;
    const body = p.body === undefined || p.method === 'GET' ? undefined : typeof p.body === 'string' ? p.body : new Uint8Array(p.body);
    const res = await fetch(`${t.baseUrl}${p.path}`, { method: p.method, headers, body, redirect: 'manual' });
    return { status: res.status, text: await res.text(), type: res.headers.get('content-type') ?? '' };
  }

  function check(p: Probe, res: { status: number; text: string; type: string }): Violation | null {
    const v = (problem: string): Violation => ({ op: p.op, label: p.label, kind: p.kind, status: res.status, problem, body: res.text.slice(0, 300) });
    if (res.status >= 500) return v('5xx');
    if (LEAK.test(res.text)) return v(`internal text: ${LEAK.exec(res.text)?.[0]}`);
    if (res.status < 400) return null;
    if (!res.type.includes('application/json')) return v(`error as ${res.type || 'no content type'}`);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(res.text);
    } catch {
      return v('error body is not JSON');
    }
    const shaped =
      body.success === false && body.statusCode === res.status && typeof body.code === 'string' && /^[a-z][a-z0-9_]*$/.test(body.code) && typeof body.error === 'string' && typeof body.requestId === 'string' && body.requestId.length > 0;
    return shaped ? null : v('error not in the error shape');
  }

  /** The value a path parameter takes in a well-formed request: a real id where the world has one. */
  function pathId(path: string, name: string): string {
    const named: Record<string, string | undefined> = {
      orgId: ids.orgA,
      partnerId: ids.partner,
      deviceId: ids.deviceA1,
      definitionId: created['/api/v1/custom-fields'],
    };
    if (name !== 'id') return named[name] ?? randomUUID();
    const collection = path.slice(0, path.indexOf('/{id}'));
    const known: Record<string, string | undefined> = {
      '/api/v1/organizations': ids.orgA,
      '/api/v1/sites': ids.siteA2,
      '/api/v1/devices': ids.deviceA2,
      '/api/v1/device-groups': ids.groupA1,
      '/api/v1/users': ids.readerA,
      '/api/v1/agents': agent.id,
    };
    return known[collection] ?? created[collection] ?? randomUUID();
  }

  const bodyIds = (): Ids => ({
    orgId: ids.orgA,
    siteId: ids.siteA1,
    deviceId: ids.deviceA1,
    partnerId: ids.partner,
    roleId: ids.readerRoleA,
    userId: ids.readerA,
  });

  function probes(path: string, method: string, op: Operation): Probe[] {
    const name = `${method.toUpperCase()} ${path}`;
    const security = (op.security ?? []).flatMap((s) => Object.keys(s));
    const isAgent = security.includes('agent');
    const isPublic = security.length === 0;
    const rotation: Kind[] = isAgent ? ['agent'] : isPublic ? ['none'] : ['admin', 'tech', 'apiKey'];
    const baselineKinds: Kind[] = isAgent ? ['agent', 'admin', 'none'] : isPublic ? ['none', 'admin'] : ['admin', 'tech', 'techA', 'apiKey', 'reader', 'agent', 'none'];
    let turn = 0;
    const kind = () => rotation[turn++ % rotation.length];

    const params = op.parameters ?? [];
    const pathNames = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const fill = (overrides: Record<string, string> = {}) => path.replace(/\{(\w+)\}/g, (_, n: string) => overrides[n] ?? encodeURIComponent(pathId(path, n)));
    const query = params.filter((p) => p.in === 'query');
    const baseQuery = query.filter((p) => p.required).map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(sample(doc, p.schema, p.name, bodyIds())))}`);
    const url = (overrides: Record<string, string> = {}, q: string[] = baseQuery) => `${fill(overrides)}${q.length ? `?${q.join('&')}` : ''}`;

    const jsonSchema = op.requestBody?.content?.['application/json']?.schema;
    const schema = jsonSchema ? resolve(doc, jsonSchema) : undefined;
    const baseline = (schema ? sample(doc, schema, '', bodyIds()) : undefined) as Record<string, Value> | undefined;
    const baseBody = baseline && typeof baseline === 'object' && !Array.isArray(baseline) ? baseline : {};
    const json = { 'content-type': 'application/json' };
    const hasBody = method !== 'get' && method !== 'delete';
    const body = hasBody ? serialise(baseBody) : undefined;
    const out: Probe[] = [];
    const add = (label: string, k: Kind, p: string, b?: string | Buffer, headers: Record<string, string> = b === undefined ? {} : json) =>
      out.push({ op: name, label, kind: k, method: method.toUpperCase(), path: p, body: b, headers });

    for (const k of baselineKinds) add('baseline', k, url(), body);
    if (schema?.properties) {
      for (const [field, fieldSchema] of Object.entries(schema.properties)) {
        for (const [label, value] of fieldValues(doc, fieldSchema, field, bodyIds())) add(`${field}: ${label}`, kind(), url(), serialise({ ...baseBody, [field]: value }));
      }
    }
    if (hasBody) {
      for (const [label, b] of wholeBodies(baseBody)) add(`body: ${label}`, kind(), url(), b);
      for (const [label, headers, b] of WRONG_TYPES) add(`content: ${label}`, kind(), url(), b, headers);
    }
    // The other media types an operation documents (an import document as bytes, a CSV file) get the same bodies.
    for (const type of Object.keys(op.requestBody?.content ?? {}).filter((c) => c !== 'application/json')) {
      for (const [label, b] of [...wholeBodies(baseBody), ...OTHER_BODIES]) add(`${type}: ${label}`, kind(), url(), b, { 'content-type': type });
    }
    for (const n of pathNames) for (const [label, value] of PATH_VALUES) add(`path ${n}: ${label}`, kind(), url({ [n]: value }), body);
    for (const p of query) for (const [label, q] of queryValues(p.name)) add(`query ${p.name}: ${label}`, kind(), url({}, [...baseQuery.filter((x) => !x.startsWith(`${encodeURIComponent(p.name)}=`)), q]), body);
    add('query: prototype keys', kind(), url({}, [...baseQuery, '__proto__[isAdmin]=true', 'constructor[prototype][x]=1']), body);
    return out;
  }

  async function run(list: Probe[], violations: Violation[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < list.length; i = next++) {
        const p = list[i];
        const res = await call(p);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        const problem = check(p, res);
        if (problem) violations.push(problem);
        if (p.method === 'POST' && res.status === 201 && !p.path.includes('{')) remember(p.path.split('?')[0], res.text);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }

  /** Keeps an id created by a collection's POST, so the item routes of that collection act on a real row. */
  function remember(collection: string, text: string): void {
    if (created[collection]) return;
    try {
      const body = JSON.parse(text) as Record<string, unknown>;
      const item = Object.values(body).find((v): v is { id: string } => typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string');
      if (item) created[collection] = item.id;
    } catch {
      // not JSON: nothing to keep
    }
  }

  it('answers every bad request to every documented operation without a 5xx, in the error shape, without internal text', async () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      HTTP_METHODS.filter((m) => item[m]).map((m) => ({ path, method: m, op: item[m] as Operation })),
    );
    // Deletions last, so the other operations act on the rows they would delete.
    const ordered = [...operations.filter((o) => o.method !== 'delete'), ...operations.filter((o) => o.method === 'delete')];
    const violations: Violation[] = [];
    const covered = new Set<string>();
    const started = Date.now();
    for (const o of ordered) {
      const list = probes(o.path, o.method, o.op);
      await run(list, violations);
      covered.add(`${o.method} ${o.path}`);
    }
    if (process.env.CAMPAIGN_REPORT) {
      process.stdout.write(`bad-input campaign: ${sent} requests, ${covered.size} operations, ${((Date.now() - started) / 1000).toFixed(1)} s, ${violations.length} violations; statuses ${JSON.stringify(statuses)}\n`);
    }
    expect(operations.length).toBeGreaterThan(100);
    expect(covered.size).toBe(operations.length);
    // One line per violation, the first of each operation and problem with its body, so a failure reads as a list.
    const seen = new Set<string>();
    const report = violations.map((v) => {
      const key = `${v.op} ${v.problem}`;
      const first = !seen.has(key);
      seen.add(key);
      return `${v.op} | ${v.label} | ${v.kind} | ${v.status} ${v.problem}${first ? ` | ${v.body}` : ''}`;
    });
    expect(report).toEqual([]);
  }, 240_000);

  it('is healthy afterwards: live, ready, serving sessions and agents', async () => {
    expect((await call({ method: 'GET', path: '/api/v1/health', kind: 'none' })).status).toBe(200);
    expect((await call({ method: 'GET', path: '/api/v1/health/ready', kind: 'none' })).status).toBe(200);
    auth.admin = `Bearer ${await t.token(ids.adminA, { mfa: true })}`;
    const me = await call({ method: 'GET', path: '/api/v1/auth/me', kind: 'admin' });
    expect({ status: me.status, email: JSON.parse(me.text).user?.email }).toEqual({ status: 200, email: expect.stringContaining('admin-a@') });
    const settings = await call({ method: 'GET', path: `/api/v1/agents/${agent.id}/pam-settings`, kind: 'agent' });
    expect(settings.status).toBe(200);
  });
});
