import { randomBytes } from 'node:crypto';
import { AUDIT_EXPORT } from '../../src/modules/audit/dto/audit-export.dto';
import type { BenchContext, CustomResult, Scenario } from '../bench.types';
import { memoryMb, resetPeak, servicePid } from '../service-process';

/**
 * Audit export benchmark (issue 29, item 4: the service's memory stays flat for 1,000,000 rows).
 * BENCH_AUDIT_ROWS (default 1,000,000) audit events of a partner's two organizations, written in
 * one set-based statement (INSERT … SELECT generate_series) over the ten days before the last
 * hour, then read through GET /audit-logs/export by the partner's technician (every organization:
 * the row-level-security path, on audit_logs_time_idx) as a SIEM reads it: 100,000 events a
 * response, each response resumed from the previous trailer's cursor, every byte consumed and the
 * lines counted (not parsed). Reports events per second, the service's peak resident set during
 * the export (its peak is reset just before, where Linux allows; otherwise sampled every 100 ms)
 * beside the resident set before it, and the time the seeding took.
 *
 * A quick check that the scenario runs: BENCH_AUDIT_ROWS=20000 BENCH_FILTER=audit npm run bench.
 */
const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 1_000_000);
const SPAN_MS = 10 * 86_400_000;

const since = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;
const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places;

/** One response read to its end as a stream: its lines, and the trailer (the last of them). */
async function readExport(url: string, token: string): Promise<{ lines: number; end: { cursor: string; count: number; more: boolean } }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200 || !res.body) throw new Error(`GET ${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  let lines = 0;
  let tail: Buffer = Buffer.alloc(0);
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) lines++;
    // The trailer is the last line, a few hundred bytes: the stream's last 4 KB hold it.
    tail = buf.length >= 4096 ? buf.subarray(-4096) : Buffer.concat([tail, buf]).subarray(-4096);
  }
  const last = tail.toString('utf8').trimEnd().split('\n').pop() ?? '';
  const parsed = JSON.parse(last) as { end?: { cursor: string; count: number; more: boolean } };
  if (!parsed.end) throw new Error(`the stream ended without its trailer: ${last.slice(0, 200)}`);
  return { lines, end: parsed.end };
}

export async function run(ctx: Pick<BenchContext, 'baseUrl' | 'seed' | 'token' | 'ownerQuery'>): Promise<CustomResult['rows']> {
  const label = randomBytes(3).toString('hex');
  const ids = await ctx.seed({
    partners: [{ key: 'p', name: `Audit export bench partner ${label}` }],
    organizations: [
      { key: 'a', partner: 'p', name: `Audit export bench A ${label}` },
      { key: 'b', partner: 'p', name: `Audit export bench B ${label}` },
    ],
    roles: [{ key: 'r', scope: 'partner', partner: 'p', name: 'Technician', permissions: ['audit:read'] }],
    users: [{ key: 'u', email: `audit-export-bench-${label}@bench.example`, partnerMembership: { partner: 'p', role: 'r', orgAccess: 'all' } }],
  });
  const token = await ctx.token(ids.u);

  const seeding = process.hrtime.bigint();
  await ctx.ownerQuery(
    `INSERT INTO audit_logs (org_id, actor_type, actor_id, actor_user_id, action, resource_type, resource_id, details, ip, request_id, created_at)
     SELECT CASE WHEN g % 2 = 0 THEN $1::uuid ELSE $2::uuid END, 'user', $3::uuid, $3::uuid,
            (ARRAY['device.update', 'pam.request.approve', 'sso.provider.update', 'contact.create'])[1 + g % 4], 'device', md5(g::text),
            jsonb_build_object('changes', jsonb_build_object('hostname', 'WS-' || g, 'siteId', md5((g % 97)::text)), 'reason', 'benchmark event ' || g),
            '203.0.113.' || (g % 250), md5((g * 7)::text), now() - interval '1 hour' - (g * ($4::float8 / $5) * interval '1 millisecond')
       FROM generate_series(1, $5::int) g`,
    [ids.a, ids.b, ids.u, SPAN_MS, ROWS],
  );
  await ctx.ownerQuery('ANALYZE audit_logs');
  const seeded = since(seeding);

  const pid = servicePid(ctx.baseUrl);
  const before = pid ? memoryMb(pid) : null;
  const reset = pid ? resetPeak(pid) : false;
  let sampled = before?.rss ?? 0;
  const sampler = pid ? setInterval(() => (sampled = Math.max(sampled, memoryMb(pid).rss)), 100) : null;

  const from = new Date(Date.now() - SPAN_MS - 2 * 3_600_000).toISOString();
  const started = process.hrtime.bigint();
  let events = 0;
  let responses = 0;
  let query = `from=${encodeURIComponent(from)}`;
  try {
    for (;;) {
      const { lines, end } = await readExport(`${ctx.baseUrl}/api/v1/audit-logs/export?${query}&limit=${AUDIT_EXPORT.maxLimit}`, token);
      if (lines !== end.count + 1) throw new Error(`a response had ${lines} lines for ${end.count} events and its trailer`);
      events += end.count;
      responses++;
      if (!end.more) break;
      query = `cursor=${end.cursor}`;
    }
  } finally {
    if (sampler) clearInterval(sampler);
  }
  const seconds = since(started);
  if (events !== ROWS) throw new Error(`exported ${events} events of the ${ROWS} written`);
  const peak = pid ? (reset ? memoryMb(pid).peak : Math.max(sampled, memoryMb(pid).rss)) : null;

  const n = ROWS.toLocaleString('en');
  return [
    { scenario: `audit export: ${n} events, ${responses} responses of up to ${AUDIT_EXPORT.maxLimit.toLocaleString('en')} resumed by cursor`, value: Math.round(events / seconds), unit: 'events/s' },
    { scenario: `  audit export: ${n} events, first request to last trailer`, value: round(seconds), unit: 's' },
    ...(peak === null || before === null
      ? []
      : [
          { scenario: `  audit export: service RSS before the export`, value: before.rss, unit: 'MB' },
          { scenario: `  audit export: service peak RSS during the export (${reset ? 'VmHWM reset before it' : 'sampled every 100 ms'})`, value: peak, unit: 'MB', target: 'flat: independent of the rows exported' },
        ]),
    { scenario: `  audit export: seeding ${n} rows (INSERT … SELECT generate_series, then ANALYZE)`, value: round(seeded), unit: 's' },
  ];
}

export const scenario: Scenario = {
  name: `audit export: ${ROWS.toLocaleString('en')} events as NDJSON through GET /audit-logs/export`,
  order: 90,
  async prepare(ctx) {
    return { kind: 'custom', rows: await run(ctx) };
  },
};
