import { randomBytes } from 'node:crypto';
import type { BenchContext, Scenario } from './bench.types';

/**
 * Import benchmark (issue: "10,000 devices' custom-field values and 20,000 contacts, under
 * 60 s"). One interchange document with 10 customers, each with 2 locations, 1,000 devices,
 * 3 custom-field values per device (30,000 value rows) and 2,000 contacts, posted to the
 * service under test as application/vnd.rmm-import+json and timed from the POST until
 * GET /imports/:id reports it completed. Then the identical document again (the idempotent
 * path: every record compared, nothing written).
 *
 * Callable on its own: `run(ctx)` needs only ctx.baseUrl, ctx.seed and ctx.token (see
 * bench/bench.types.ts); the runner picks up `scenario`.
 */
export const IMPORT_BENCH = { customers: 10, devicesPerCustomer: 1_000, contactsPerCustomer: 2_000, locationsPerCustomer: 2 } as const;

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
  error: unknown;
}

async function timedImport(baseUrl: string, token: string, body: string): Promise<{ seconds: number; job: ImportState }> {
  const started = process.hrtime.bigint();
  const res = await fetch(`${baseUrl}/api/v1/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.rmm-import+json' },
    body,
  });
  if (res.status !== 202) throw new Error(`POST /imports answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const id = ((await res.json()) as { import: { id: string } }).import.id;
  for (;;) {
    const poll = await fetch(`${baseUrl}/api/v1/imports/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const job = ((await poll.json()) as { import: ImportState }).import;
    if (job.status === 'failed') throw new Error(`import failed: ${JSON.stringify(job.error)}`);
    if (job.status === 'completed') return { seconds: Number(process.hrtime.bigint() - started) / 1e9, job };
    await new Promise((r) => setTimeout(r, 250));
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
  const phase = (n: string) => (first.job.phases.find((p) => p.name === n)?.durationMs ?? 0) / 1000;
  const again = await timedImport(ctx.baseUrl, token, body);
  if (again.job.counts.created + again.job.counts.updated !== 0) throw new Error(`re-import changed data: ${JSON.stringify(again.job.counts)}`);

  const round = (s: number) => Math.round(s * 100) / 100;
  return [
    { scenario: `${name} (${(body.length / 1e6).toFixed(1)} MB document)`, value: round(first.seconds), unit: 's', target: '< 60 s' },
    { scenario: '  of which phase devices', value: round(phase('devices')), unit: 's' },
    { scenario: '  of which phase contacts', value: round(phase('contacts')), unit: 's' },
    { scenario: '  of which phase customFieldValues', value: round(phase('customFieldValues')), unit: 's' },
    { scenario: 'import: the same document again (nothing changes)', value: round(again.seconds), unit: 's' },
  ];
}

export const scenario: Scenario = {
  name: 'import: 10,000 devices custom-field values + 20,000 contacts',
  order: 80,
  async prepare(ctx) {
    return { kind: 'custom', rows: await run(ctx) };
  },
};
