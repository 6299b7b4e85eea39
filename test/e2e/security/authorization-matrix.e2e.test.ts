import { writeFileSync } from 'node:fs';
import request from 'supertest';
import { Outcome, TABLE, Variant } from './authorization-matrix.table';
import { CALLER_NAMES, CALLERS, CallerName, MatrixContext, nextClientAddress, startMatrixWorld } from './authorization-matrix.world';

/**
 * Issue 13, "what it must show": every operation of the served OpenAPI document, called over HTTP
 * by each kind of caller against real data, answers what authorization-matrix.table.ts declares.
 * A route without a row fails here, so a new route cannot ship without its policy being stated.
 *
 * Set AUTHZ_MATRIX_REPORT=<file> to write every cell (request, declared outcome, answer) as JSON.
 */

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
type Method = (typeof HTTP_METHODS)[number];

interface CellResult {
  status: number;
  code?: string;
  location?: string;
  body: unknown;
  request: { method: string; url: string; query?: unknown; body?: unknown };
}

function said(outcome: Outcome, success: number, location?: string): string {
  if (outcome !== 'ok') return `${outcome[0]} ${outcome[1]}`;
  return location ? `${success} to ${location}` : `${success}`;
}

async function runCell(ctx: MatrixContext, operation: string, v: Variant, caller: CallerName): Promise<CellResult> {
  const [verb, template] = operation.split(' ');
  const method = verb.toLowerCase() as Method;
  const s = v.setup ? await v.setup(ctx, caller) : {};
  const params = v.params?.(ctx, s, caller) ?? {};
  const url = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${operation}: no value for {${name}}`);
    return encodeURIComponent(params[name]);
  });
  const bearer = v.bearer ? await v.bearer(ctx, s, caller) : ctx.bearer(caller);
  let r = request(ctx.t.http)[method](url).set('X-Forwarded-For', nextClientAddress()).redirects(0);
  if (bearer) r = r.set('Authorization', `Bearer ${bearer}`);
  const query = v.query?.(ctx, s, caller);
  if (query) r = r.query(query);
  const body = v.body?.(ctx, s, caller);
  if (body !== undefined) r = r.set('Content-Type', v.contentType ?? 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  const res = await r;
  if (v.endsSessions) await ctx.remint(caller);
  return {
    status: res.status,
    code: res.body && typeof res.body === 'object' ? res.body.code : undefined,
    location: res.headers.location,
    body: res.body && Object.keys(res.body).length ? res.body : res.text?.slice(0, 300),
    request: { method: verb, url, ...(query ? { query } : {}), ...(body !== undefined ? { body } : {}) },
  };
}

/** Why a cell's answer is not the declared one, or null when it is. */
function mismatch(ctx: MatrixContext, v: Variant, caller: CallerName, outcome: Outcome, got: CellResult): string | null {
  if (outcome !== 'ok') {
    const [status, code] = outcome;
    if (got.status !== status || got.code !== code) return `expected ${status} ${code}`;
    const b = got.body as Record<string, unknown>;
    if (b?.success !== false || b?.statusCode !== status || typeof b?.error !== 'string' || typeof b?.requestId !== 'string') return 'expected the error body of docs/api-conventions.md';
    return null;
  }
  if (got.status !== v.success) return `expected ${v.success}`;
  if (v.location !== undefined && got.location !== v.location) return `expected Location ${v.location}`;
  const text = JSON.stringify(got.body);
  for (const h of v.hides ?? []) {
    if (!h.from.includes(caller)) continue;
    const leaked = h.ids(ctx).filter((id) => text.includes(id));
    if (leaked.length) return `expected the answer not to show ${leaked.join(', ')}`;
  }
  return null;
}

describe('the authorization matrix', () => {
  let ctx: MatrixContext;
  let served: string[] = [];
  const cells: { cell: string; expected: string; failed: string | null; got: CellResult }[] = [];

  beforeAll(async () => {
    ctx = await startMatrixWorld();
    const doc = (await request(ctx.t.http).get('/api/docs-json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    served = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => (HTTP_METHODS as readonly string[]).includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
  }, 120_000);

  afterAll(async () => {
    if (process.env.AUTHZ_MATRIX_REPORT) writeFileSync(process.env.AUTHZ_MATRIX_REPORT, JSON.stringify(cells, null, 2));
    await ctx?.close();
  });

  it('declares every operation of the served OpenAPI document', () => {
    expect(served.length).toBeGreaterThan(100);
    expect(served.filter((op) => !TABLE[op])).toEqual([]);
  });

  it('declares no operation the served document does not have', () => {
    expect(Object.keys(TABLE).filter((op) => !served.includes(op))).toEqual([]);
  });

  for (const [operation, variants] of Object.entries(TABLE)) {
    describe(operation, () => {
      for (const v of variants) {
        for (const caller of CALLERS) {
          const outcome = v.expect[caller];
          it(`${operation} (${v.target}) answers ${said(outcome, v.success, v.location)} to ${CALLER_NAMES[caller]}`, async () => {
            const got = await runCell(ctx, operation, v, caller);
            const why = mismatch(ctx, v, caller, outcome, got);
            cells.push({ cell: `${operation} (${v.target}) as ${caller}`, expected: said(outcome, v.success, v.location), failed: why, got });
            if (why) {
              throw new Error(`${why}; got ${got.status}${got.code ? ` ${got.code}` : ''}${got.location ? ` to ${got.location}` : ''}: ${JSON.stringify(got.body).slice(0, 400)}`);
            }
          });
        }
      }
    });
  }
});
