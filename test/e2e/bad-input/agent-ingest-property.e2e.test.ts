import fc from 'fast-check';
import request from 'supertest';
import { ownerQuery, startTestApp, type TestApp } from '../../support/test-app';
import { AgentKit, prompt } from '../agent/agent-kit';
import { LEAK } from './campaign.kit';

/**
 * Issue 18, part 3: a property test of agent ingest. Any body an agent (or whoever holds its
 * token) can send is answered without a 5xx, in the error shape when refused, without internal
 * text; and every prompt answered 201 is stored.
 */

const TEXT = fc.string({ unit: 'binary', maxLength: 300 });
const NASTY = fc.constantFrom('', '\u0000', 'a\u0000b', '\u202e', '\ud800', '%_\\', '**/?[', '💥'.repeat(200), 'x'.repeat(1025), 'x'.repeat(40_000), '__proto__');
const DEEP = fc.integer({ min: 1, max: 40 }).map((n) => ({ raw: '['.repeat(n) + ']'.repeat(n) }));
const ANY = fc.oneof(TEXT, NASTY, fc.jsonValue({ maxDepth: 4 }), fc.integer(), fc.double(), fc.constant(null), DEEP);
const valid = prompt();

/** A field: usually valid, sometimes anything. */
const field = (good: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: good, weight: 3 }, { arbitrary: ANY, weight: 2 }, { arbitrary: fc.constant(undefined), weight: 1 });

const body = fc.record({
  subject_username: field(fc.constant(valid.subject_username)),
  target_executable_path: field(fc.constant(valid.target_executable_path)),
  target_executable_hash: field(fc.constantFrom(valid.target_executable_hash, String(valid.target_executable_hash).toUpperCase())),
  target_executable_signer: field(fc.constantFrom('Contoso Ltd', null)),
  pid: field(fc.integer({ min: 0, max: 2_147_483_647 })),
  parent_image: field(fc.constant(valid.parent_image)),
  command_line: field(TEXT.filter((s) => s.length > 0)),
  // The valid branch stays in four-digit years: fc.date's whole range (to year 275760) writes "+275760-…",
  // which is not an ISO 8601 date-time, so the branch meant as usually valid was almost never valid
  // and a run could accept nothing at all (anything stays covered by ANY).
  observed_at: field(fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString())),
  extra: fc.option(fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', '')), ANY, { maxKeys: 3 }), { nil: undefined }),
});

/** JSON text of a generated body: `raw` values spliced in verbatim, `extra` keys (prototype keys included) written as keys. */
function text(b: Record<string, unknown>): string {
  const write = (v: unknown): string => {
    if (v && typeof v === 'object' && 'raw' in (v as object) && Object.keys(v as object).length === 1) return (v as { raw: string }).raw;
    if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
    if (v && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${write(x)}`).join(',')}}`;
    return JSON.stringify(v) ?? 'null';
  };
  const { extra, ...fields } = b;
  const entries = [...Object.entries(fields).filter(([, v]) => v !== undefined), ...Object.entries((extra as Record<string, unknown>) ?? {})];
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${write(v)}`).join(',')}}`;
}

describe('property: agent ingest bodies', () => {
  let t: TestApp;
  let k: AgentKit;

  beforeAll(async () => {
    t = await startTestApp();
    k = await new AgentKit(t).seed();
  });
  afterAll(() => t.close());

  it('answers any body without a 5xx, refusals in the error shape and without internal text, and stores every prompt it accepts', async () => {
    const agent = k.agent('deviceA1');
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const res = await request(t.http)
          .post(`/api/v1/agents/${agent.id}/elevation-requests`)
          .set('Authorization', `Bearer ${agent.token}`)
          .set('Content-Type', 'application/json')
          .send(text(b));
        expect(res.status).toBeLessThan(500);
        expect(res.text).not.toMatch(LEAK);
        if (res.status === 201) accepted++;
        if (res.status >= 400) {
          expect(res.body).toEqual({ success: false, statusCode: res.status, code: expect.stringMatching(/^[a-z_]+$/), error: expect.any(String), requestId: expect.any(String), ...(res.body.details ? { details: expect.any(Array) } : {}), ...(res.body.retryAfter !== undefined ? { retryAfter: expect.any(Number) } : {}) });
        }
      }),
      { numRuns: 300 },
    );
    const [row] = await ownerQuery<{ n: number }>(`SELECT count(*)::int AS n FROM elevation_requests WHERE device_id = $1`, [k.ids.deviceA1]);
    expect(row.n).toBe(accepted);
    expect(accepted).toBeGreaterThan(0);
  });
});
