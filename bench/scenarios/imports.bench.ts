import { randomBytes } from 'node:crypto';
import type { BenchContext, Scenario } from '../bench.types';
import { memoryMb, servicePid } from '../service-process';

/**
 * Import benchmark (issue 30: "60,042 records in ≤ 10 s, a re-import in ≤ 5 s, the 202 in ≤ 1 s").
 * One interchange document with 10 customers, each with 2 locations, 1,000 devices, 3
 * custom-field values per device (30,000 value rows) and 2,000 contacts (about 6 MB), posted to
 * the service under test as application/vnd.rmm-import+json and timed from the POST until
 * GET /imports/:id reports it completed; the 202 on its own; where the time went (the phases'
 * own durations, the wait before the job started, and the rest: bookkeeping between phases and
 * polling); the service's peak RSS. Then the identical document again (the idempotent path:
 * every record compared, nothing written).
 *
 * BENCH_IMPORT_SCALE (default 1) scales the document, e.g. 0.01 for a quick check that the
 * scenario runs. Callable on its own: `run(ctx)` needs only ctx.baseUrl, ctx.seed and ctx.token
 * (see bench/bench.types.ts); the runner picks up `scenario`.
 */
const SCALE = Number(process.env.BENCH_IMPORT_SCALE ?? 1);
export const IMPORT_BENCH = {
  customers: Math.max(1, Math.round(10 * Math.min(SCALE, 1))),
  devicesPerCustomer: Math.max(1, Math.round(1_000 * SCALE)),
  contactsPerCustomer: Math.max(1, Math.round(2_000 * SCALE)),
  locationsPerCustomer: 2,
};

export interface BenchRow {
  scenario: string;
  value: number;
  unit: string;
  target?: string;
}

export function benchDocument(label: string): object {
  const { customers, devicesPerCustomer, contactsPerCustomer, locationsPerCustomer } = IMPORT_BENCH;
  return {
    format: 'rmm-interchange',
    version: 1,
    source: { system: `bench-${label}` },
    customFields: [
      { externalId: 'cf-1', key: 'asset_tag', name: 'Asset tag', type: 'text' },
      { externalId: 'cf-2', key: 'ram_gb', name: 'RAM (GB)', type: 'number', validation: { min: 0, max: 4096 } },
      { externalId: 'cf-3', key: 'backup_tier', name: 'Backup tier', type: 'single_select', options: ['Gold', 'Silver', 'Bronze'] },
    ],
    customers: Array.from({ length: customers }, (_, c) => ({
      externalId: `c${c}`,
      name: `Bench customer ${c} ${label}`,
      locations: Array.from({ length: locationsPerCustomer }, (_, l) => ({ externalId: `c${c}-l${l}`, name: `Location ${l}` })),
      devices: Array.from({ length: devicesPerCustomer }, (_, d) => ({
        externalId: `c${c}-d${d}`,
        hostname: `C${c}-HOST-${String(d).padStart(5, '0')}`,
        osType: d % 5 === 0 ? 'linux' : 'windows',
        locationExternalId: `c${c}-l${d % locationsPerCustomer}`,
      })),
      contacts: Array.from({ length: contactsPerCustomer }, (_, p) => ({
        externalId: `c${c}-p${p}`,
        name: `Contact ${c}-${p}`,
        email: `contact${p}@customer${c}.bench.example`,
        phones: p % 2 ? [{ type: 'work', number: `+1 555 ${String(p).padStart(4, '0')}` }] : [],
        title: p % 3 ? 'Staff' : 'Manager',
        ...(p % 4 === 0 ? { locationExternalId: `c${c}-l0` } : {}),
      })),
      customFieldValues: Array.from({ length: devicesPerCustomer }, (_, d) => [
        { deviceExternalId: `c${c}-d${d}`, field: 'asset_tag', value: `AT-${c}-${d}` },
        { deviceExternalId: `c${c}-d${d}`, field: 'ram_gb', value: 8 * ((d % 8) + 1) },
        { deviceExternalId: `c${c}-d${d}`, field: 'backup_tier', value: ['Gold', 'Silver', 'Bronze'][d % 3] },
      ]).flat(),
    })),
  };
}

interface ImportState {
  status: string;
  phases: { name: string; durationMs: number | null }[];
  counts: Record<string, number>;
  totalItems: number;
  error: unknown;
  createdAt: string;
  startedAt: string | null;
}

interface Timed {
  seconds: number;
  accepted: number;
  /** From the job's creation until a worker claimed it. */
  queued: number;
  job: ImportState;
}

const since = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

async function timedImport(baseUrl: string, token: string, body: string): Promise<Timed> {
  const started = process.hrtime.bigint();
  const res = await fetch(`${baseUrl}/api/v1/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.rmm-import+json' },
    body,
  });
  if (res.status !== 202) throw new Error(`POST /imports answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const id = ((await res.json()) as { import: { id: string } }).import.id;
  const accepted = since(started);
  for (;;) {
    const poll = await fetch(`${baseUrl}/api/v1/imports/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const job = ((await poll.json()) as { import: ImportState }).import;
    if (job.status === 'failed') throw new Error(`import failed: ${JSON.stringify(job.error)}`);
    if (job.status === 'completed') {
      const queued = job.startedAt ? (Date.parse(job.startedAt) - Date.parse(job.createdAt)) / 1000 : 0;
      return { seconds: since(started), accepted, queued, job };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Peak resident set of the process listening on the service's port, when it can be found (Linux). */
function servicePeakRssMb(baseUrl: string): number | null {
  try {
    const pid = servicePid(baseUrl);
    return pid === null ? null : memoryMb(pid).peak;
  } catch {
    return null;
  }
}

export async function run(ctx: Pick<BenchContext, 'baseUrl' | 'seed' | 'token'>): Promise<BenchRow[]> {
  const label = randomBytes(3).toString('hex');
  const ids = await ctx.seed({
    partners: [{ key: 'p', name: `Import bench partner ${label}` }],
    roles: [{ key: 'r', scope: 'partner', partner: 'p', name: 'Technician', permissions: ['*'] }],
    users: [{ key: 'u', email: `import-bench-${label}@bench.example`, partnerMembership: { partner: 'p', role: 'r', orgAccess: 'all' } }],
  });
  const token = await ctx.token(ids.u, { mfa: true });
  const body = JSON.stringify(benchDocument(label));
  const { customers, devicesPerCustomer, contactsPerCustomer } = IMPORT_BENCH;
  const devices = customers * devicesPerCustomer;
  const contacts = customers * contactsPerCustomer;
  const name = `import: ${devices.toLocaleString('en')} devices × 3 custom-field values + ${contacts.toLocaleString('en')} contacts`;

  const first = await timedImport(ctx.baseUrl, token, body);
  if (first.job.counts.created < devices * 4 + contacts) throw new Error(`expected every record created, got ${JSON.stringify(first.job.counts)}`);
  const again = await timedImport(ctx.baseUrl, token, body);
  if (again.job.counts.created + again.job.counts.updated !== 0) throw new Error(`re-import changed data: ${JSON.stringify(again.job.counts)}`);
  const rss = servicePeakRssMb(ctx.baseUrl);

  const round = (s: number) => Math.round(s * 100) / 100;
  const breakdown = (label: string, r: Timed): BenchRow[] => {
    const phases = r.job.phases.reduce((n, p) => n + (p.durationMs ?? 0), 0) / 1000;
    return [
      { scenario: `  ${label}: 202 answered after`, value: round(r.accepted), unit: 's', target: '≤ 1 s' },
      { scenario: `  ${label}: waiting for a worker`, value: round(r.queued), unit: 's' },
      ...r.job.phases.map((p) => ({ scenario: `  ${label}: phase ${p.name}`, value: round((p.durationMs ?? 0) / 1000), unit: 's' })),
      { scenario: `  ${label}: the rest (between phases, report, polling)`, value: round(Math.max(0, r.seconds - r.accepted - r.queued - phases)), unit: 's' },
    ];
  };
  return [
    { scenario: `${name}: ${first.job.totalItems.toLocaleString('en')} records (${(body.length / 1e6).toFixed(1)} MB document), request to report`, value: round(first.seconds), unit: 's', target: '≤ 10 s' },
    ...breakdown('first', first),
    { scenario: 'import: the same document again (nothing changes)', value: round(again.seconds), unit: 's', target: '≤ 5 s' },
    ...breakdown('again', again),
    ...(rss === null ? [] : [{ scenario: 'import: peak RSS of the service', value: rss, unit: 'MB' }]),
  ];
}

export const scenario: Scenario = {
  name: 'imports: 60,042-record document (10,000 devices, 20,000 contacts, 30,000 values)',
  order: 80,
  async prepare(ctx) {
    return { kind: 'custom', rows: await run(ctx) };
  },
};
