import { CONTACT_LIMITS } from '../../content/contacts/contact-fields.util';
import { CUSTOM_FIELD_KEY } from '../../content/custom-fields/custom-field-value.util';
import type { Path, Problem } from '../../../common/shape/path.util';
import { checkShape } from '../../../common/shape/shape.util';
import { CsvError, csvRecords } from '../csv/csv.util';
import { CONTACT_SHAPE } from './interchange.shape';
import { MAX_PROBLEMS } from './interchange.validator';
import type {
  InterchangeDocument,
  SourceContact,
  SourceCustomField,
  SourceDevice,
  SourceDeviceGroup,
  SourceLocation,
  SourcePolicy,
  SourceScript,
  SourceValue,
} from './interchange.types';

export const IMPORT_FORMATS = ['interchange', 'contacts_csv', 'custom_field_values_csv'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export const PHASES = ['organizations', 'customFields', 'devices', 'contacts', 'customFieldValues', 'deviceGroups', 'scripts', 'policies'] as const;
export type PhaseName = (typeof PHASES)[number];

/** One source record and where it came from (a document path, or a CSV line). */
export interface Planned<T> {
  ref: string;
  item: T;
  /** Set for records a location owns (location-scoped fields, scripts, policies). */
  locationExternalId?: string;
}

/** A CSV contact names its site by name; a document contact by location. */
export type PlannedContact = SourceContact & { siteName?: string | null };
/** A CSV value is text, parsed for the field's type; a document value is typed. */
export type PlannedValue = SourceValue & { text?: boolean };

export interface PlannedCustomer {
  ref: string;
  /** A source customer (matched or created), or the organization a CSV import targets. */
  target: { externalId: string; name: string } | { orgId: string };
  locations: Planned<SourceLocation>[];
  devices: Planned<SourceDevice>[];
  contacts: Planned<PlannedContact>[];
  customFields: Planned<SourceCustomField>[];
  values: Planned<PlannedValue>[];
  groups: Planned<SourceDeviceGroup>[];
  scripts: Planned<SourceScript>[];
  policies: Planned<SourcePolicy>[];
}

/** What an import job works through, whatever format it came in; stored with the job. */
export interface ImportPlan {
  format: ImportFormat;
  source: string;
  phases: PhaseName[];
  account: { customFields: Planned<SourceCustomField>[]; scripts: Planned<SourceScript>[]; policies: Planned<SourcePolicy>[] };
  customers: PlannedCustomer[];
}

const list = <T>(items: T[] | undefined, ref: string, extra: Partial<Planned<T>> = {}): Planned<T>[] => (items ?? []).map((item, i) => ({ ref: `${ref}[${i}]`, item, ...extra }));

export function planFromInterchange(doc: InterchangeDocument): ImportPlan {
  return {
    format: 'interchange',
    source: doc.source.system,
    phases: [...PHASES],
    account: { customFields: list(doc.customFields, 'customFields'), scripts: list(doc.scripts, 'scripts'), policies: list(doc.policies, 'policies') },
    customers: doc.customers.map((c, i) => {
      const ref = `customers[${i}]`;
      // Location-owned content follows the customer's own, in document order: later rows win.
      const byLocation = <T>(key: 'customFields' | 'scripts' | 'policies', own: T[] | undefined): Planned<T>[] => [
        ...list(own, `${ref}.${key}`),
        ...(c.locations ?? []).flatMap((l, li) => list((l[key] ?? []) as T[], `${ref}.locations[${li}].${key}`, { locationExternalId: l.externalId })),
      ];
      return {
        ref,
        target: { externalId: c.externalId, name: c.name },
        locations: list(c.locations, `${ref}.locations`),
        devices: list(c.devices, `${ref}.devices`),
        contacts: list(c.contacts, `${ref}.contacts`),
        customFields: byLocation('customFields', c.customFields),
        values: list(c.customFieldValues, `${ref}.customFieldValues`),
        groups: list(c.deviceGroups, `${ref}.deviceGroups`),
        scripts: byLocation('scripts', c.scripts),
        policies: byLocation('policies', c.policies),
      };
    }),
  };
}

function csvCustomer(orgId: string, extra: Partial<PlannedCustomer>): PlannedCustomer {
  return { ref: 'csv', target: { orgId }, locations: [], devices: [], contacts: [], customFields: [], values: [], groups: [], scripts: [], policies: [], ...extra };
}

function csvPlan(format: ImportFormat, phase: PhaseName, customer: PlannedCustomer): ImportPlan {
  return { format, source: 'csv', phases: [phase], account: { customFields: [], scripts: [], policies: [] }, customers: [customer] };
}

/** Column name (case-insensitive) to the field it fills. */
type Columns = Record<string, string>;

interface CsvRead {
  /** Problems of the file as a whole (its header, its quoting): no row is looked at. */
  fatal: Problem[];
  /** Rows with the wrong number of fields; the other rows are still checked. */
  problems: Problem[];
  rows: { line: number; values: Record<string, string> }[];
}

function readCsv(text: string, columns: Columns, required: string[]): CsvRead {
  let parsed;
  try {
    parsed = csvRecords(text);
  } catch (err) {
    if (err instanceof CsvError) return { fatal: [[[`line ${err.line}`], err.message]], problems: [], rows: [] };
    throw err;
  }
  const byLower = new Map(Object.entries(columns).map(([k, v]) => [k.toLowerCase(), v]));
  const unknown = parsed.header.filter((h) => !byLower.has(h.toLowerCase()));
  const present = new Set(parsed.header.map((h) => byLower.get(h.toLowerCase())));
  const missing = required.filter((r) => !present.has(r));
  const header: Problem[] = [
    ...unknown.map((u): Problem => [['line 1', u], `unknown column; expected: ${Object.keys(columns).join(', ')}`]),
    ...missing.map((m): Problem => [['line 1'], `the ${m} column is required`]),
  ];
  if (header.length) return { fatal: header, problems: [], rows: [] };
  if (parsed.records.length === 0 && parsed.problems.length === 0) return { fatal: [[['line 2'], 'the file has no rows']], problems: [], rows: [] };
  const rows = parsed.records.map((r) => ({
    line: r.line,
    values: Object.fromEntries(Object.entries(r.values).map(([h, v]) => [byLower.get(h.toLowerCase()) as string, v])),
  }));
  return { fatal: [], problems: parsed.problems.map((e): Problem => [[`line ${e.line}`], e.message]), rows };
}

/** Every problem of a file in line order, at most MAX_PROBLEMS; a plan only when there is none. */
function csvResult(problems: Problem[], plan: () => ImportPlan): { plan?: ImportPlan; problems: Problem[] } {
  if (!problems.length) return { plan: plan(), problems: [] };
  const line = (p: Problem) => Number(String(p[0][0]).slice('line '.length));
  return { problems: [...problems].sort((a, b) => line(a) - line(b)).slice(0, MAX_PROBLEMS) };
}

const blank = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());

/** Contacts CSV: externalId, name, email, phone, mobile, title, notes, site (a site name). */
export function planFromContactsCsv(text: string, orgId: string): { plan?: ImportPlan; problems: Problem[] } {
  const columns = { externalId: 'externalId', name: 'name', email: 'email', phone: 'phone', mobile: 'mobile', title: 'title', notes: 'notes', site: 'site' };
  const { fatal, problems, rows } = readCsv(text, columns, ['externalId', 'name']);
  if (fatal.length) return { problems: fatal };
  const contacts: Planned<PlannedContact>[] = [];
  const seen = new Map<string, number>();
  for (const { line, values } of rows) {
    const phoneColumns = (['phone', 'mobile'] as const).filter((c) => blank(values[c]));
    const phones = phoneColumns.map((c) => ({ type: c === 'phone' ? ('work' as const) : ('mobile' as const), number: blank(values[c]) as string }));
    const contact: SourceContact = { externalId: values.externalId?.trim() ?? '', name: values.name?.trim() ?? '', email: blank(values.email) ?? null, phones, title: blank(values.title) ?? null, notes: blank(values.notes) ?? null };
    problems.push(...checkShape(CONTACT_SHAPE, contact, [`line ${line}`]).map(([p, m]): Problem => [csvPath(p, phoneColumns), m]));
    if (seen.has(contact.externalId)) problems.push([[`line ${line}`, 'externalId'], `duplicates line ${seen.get(contact.externalId)}`]);
    else seen.set(contact.externalId, line);
    contacts.push({ ref: `line ${line}`, item: { ...contact, siteName: blank(values.site) ?? null } });
  }
  return csvResult(problems, () => csvPlan('contacts_csv', 'contacts', csvCustomer(orgId, { contacts })));
}

/** A problem in phones[i] belongs to the column that filled it; any other to its field. */
function csvPath(p: Path, phoneColumns: readonly string[]): Path {
  const [line, key, index] = p;
  if (key === 'phones' && typeof index === 'number') return [line, phoneColumns[index]];
  return p.slice(0, 2);
}

/** Custom-field values CSV: deviceId (source device id), hostname, field (key), value (text; multi-select options separated by ";"). */
export function planFromValuesCsv(text: string, orgId: string): { plan?: ImportPlan; problems: Problem[] } {
  const columns = { deviceId: 'deviceExternalId', hostname: 'hostname', field: 'field', value: 'value' };
  const { fatal, problems, rows } = readCsv(text, columns, ['field', 'value']);
  if (fatal.length) return { problems: fatal };
  const values: Planned<PlannedValue>[] = [];
  for (const { line, values: v } of rows) {
    const at = `line ${line}`;
    const deviceExternalId = blank(v.deviceExternalId);
    const hostname = blank(v.hostname);
    const field = v.field?.trim() ?? '';
    const rowProblems: Problem[] = [];
    if (!deviceExternalId && !hostname) rowProblems.push([[at], 'a row names its device by deviceId or hostname']);
    if (deviceExternalId && deviceExternalId.length > 255) rowProblems.push([[at, 'deviceId'], 'must be at most 255 characters']);
    if (hostname && hostname.length > 255) rowProblems.push([[at, 'hostname'], 'must be at most 255 characters']);
    if (!CUSTOM_FIELD_KEY.test(field)) rowProblems.push([[at, 'field'], `must match ${CUSTOM_FIELD_KEY.source}`]);
    if ((v.value ?? '').length > CONTACT_LIMITS.notes) rowProblems.push([[at, 'value'], `must be at most ${CONTACT_LIMITS.notes} characters`]);
    problems.push(...rowProblems);
    values.push({ ref: at, item: { deviceExternalId, hostname, field, value: v.value ?? '', text: true } });
  }
  return csvResult(problems, () => csvPlan('custom_field_values_csv', 'customFieldValues', csvCustomer(orgId, { values })));
}

/** How many records each phase works through, for progress. */
export function phaseSizes(plan: ImportPlan): Record<PhaseName, number> {
  const sum = (f: (c: PlannedCustomer) => number) => plan.customers.reduce((n, c) => n + f(c), 0);
  return {
    organizations: plan.format === 'interchange' ? sum((c) => 1 + c.locations.length) : 0,
    customFields: plan.account.customFields.length + sum((c) => c.customFields.length),
    devices: sum((c) => c.devices.length),
    contacts: sum((c) => c.contacts.length),
    customFieldValues: sum((c) => c.values.length),
    deviceGroups: sum((c) => c.groups.length),
    scripts: plan.account.scripts.length + sum((c) => c.scripts.length),
    policies: plan.account.policies.length + sum((c) => c.policies.length),
  };
}
