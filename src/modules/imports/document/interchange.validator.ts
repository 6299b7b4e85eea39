import { formatPath, Path, Problem } from '../../../common/shape/path.util';
import { checkShape } from '../../../common/shape/shape.util';
import { FilterDefinition, filterProblems } from '../../policies/dynamic-groups/device-filter.util';
import { INTERCHANGE_SHAPE } from './interchange.shape';
import type { SourceCustomer, SourceCustomField, SourcePolicy } from './interchange.types';

/** At most this many problems are named in one answer (docs/import-format.md). */
export const MAX_PROBLEMS = 20;

/**
 * Problems of an interchange document: first its shape, then the references inside it
 * (locations of a customer, custom-field keys of group filters, assignment targets), then names
 * that collide within one owner. All three run on every document, so one answer names every
 * problem (up to MAX_PROBLEMS), not only those of the first kind found: the reference and name
 * checks look only at values whose own shape lets them (a string where a string belongs) and
 * leave the rest to the shape's problems.
 */
export function interchangeProblems(doc: unknown): Problem[] {
  const shape = checkShape(INTERCHANGE_SHAPE, doc, [], MAX_PROBLEMS);
  if (!isObject(doc)) return shape;
  const seen = new Set(shape.map(([p]) => formatPath(p, 'brackets')));
  const more = [...referenceProblems(doc), ...collisionProblems(doc)].filter(([p]) => {
    const at = formatPath(p, 'brackets');
    if (seen.has(at)) return false;
    seen.add(at);
    return true;
  });
  return [...shape, ...more].slice(0, MAX_PROBLEMS);
}

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => v !== null && typeof v === 'object' && !Array.isArray(v);
/** The object items of a list, with their indexes; anything else yields nothing. */
const items = (v: unknown): [Loose, number][] => (Array.isArray(v) ? v.flatMap((x, i): [Loose, number][] => (isObject(x) ? [[x, i]] : [])) : []);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function referenceProblems(doc: Loose): Problem[] {
  const problems: Problem[] = [];
  const accountKeys = new Map(items(doc.customFields).flatMap(([f]) => (text(f.key) ? [[f.key as string, f as unknown as SourceCustomField] as const] : [])));
  const customers = new Map(items(doc.customers).flatMap(([c]) => (text(c.externalId) ? [[c.externalId as string, c as unknown as SourceCustomer] as const] : [])));
  items(doc.policies).forEach(([p, i]) => problems.push(...assignmentProblems(p, ['policies', i], null, customers)));
  items(doc.customers).forEach(([c, ci]) => {
    const at: Path = ['customers', ci];
    const locations = new Set(items(c.locations).map(([l]) => l.externalId));
    const inLocations = (list: unknown, key: string) =>
      items(list).forEach(([x, k]) => {
        const loc = text(x.locationExternalId);
        if (loc !== undefined && !locations.has(loc)) problems.push([[...at, key, k, 'locationExternalId'], 'no location of this customer has this externalId']);
      });
    inLocations(c.devices, 'devices');
    inLocations(c.contacts, 'contacts');
    inLocations(c.deviceGroups, 'deviceGroups');
    // Fields of the organization: the customer's own and its locations', later ones overriding earlier ones.
    const orgFields = new Map<string, SourceCustomField>();
    const orgLevel: [Path, Loose][] = [
      ...items(c.customFields).map(([f, k]): [Path, Loose] => [[...at, 'customFields', k], f]),
      ...items(c.locations).flatMap(([l, li]) => items(l.customFields).map(([f, k]): [Path, Loose] => [[...at, 'locations', li, 'customFields', k], f])),
    ];
    for (const [path, f] of orgLevel) {
      const key = text(f.key);
      if (key === undefined) continue;
      if (accountKeys.has(key)) problems.push([[...path, 'key'], 'this key is already a partner-wide (account) field']);
      orgFields.set(key, f as unknown as SourceCustomField);
    }
    const lookup = (key: string): FilterDefinition | undefined => {
      const f = orgFields.get(key) ?? accountKeys.get(key);
      return f && { type: f.type, options: (Array.isArray(f.options) ? f.options : []).map((o) => String(o).trim()) };
    };
    items(c.deviceGroups).forEach(([g, k]) => {
      if (isObject(g.filter)) problems.push(...filterProblems(g.filter, lookup, [...at, 'deviceGroups', k, 'filter']));
    });
    const owner = c as unknown as SourceCustomer;
    items(c.policies).forEach(([p, k]) => problems.push(...assignmentProblems(p, [...at, 'policies', k], owner, customers)));
    items(c.locations).forEach(([l, li]) => items(l.policies).forEach(([p, k]) => problems.push(...assignmentProblems(p, [...at, 'locations', li, 'policies', k], owner, customers))));
  });
  return problems;
}

/** `owner` null: an account policy, which may target the account or anything in any customer. */
function assignmentProblems(p: Loose, at: Path, owner: SourceCustomer | null, customers: Map<string, SourceCustomer>): Problem[] {
  const problems: Problem[] = [];
  items((p as Partial<SourcePolicy>).assignments).forEach(([a, i]) => {
    const path: Path = [...at, 'assignments', i];
    const target = text(a.target);
    if (target === undefined) return;
    if (target === 'account') {
      if (owner) problems.push([[...path, 'target'], 'only an account policy can be assigned to the account']);
      return;
    }
    const customerExternalId = text(a.customerExternalId);
    if (owner && customerExternalId !== undefined && customerExternalId !== owner.externalId) {
      return void problems.push([[...path, 'customerExternalId'], 'a customer policy is assigned inside its own customer']);
    }
    const customer = owner ?? (customerExternalId !== undefined ? customers.get(customerExternalId) : undefined);
    if (!customer) return void problems.push([[...path, 'customerExternalId'], 'must name a customer of this document']);
    if (target === 'customer') return;
    const pools: Record<string, unknown> = { location: customer.locations, deviceGroup: customer.deviceGroups, device: customer.devices };
    // Any other target is a problem of the shape (its enumeration), named there.
    if (!(target in pools)) return;
    const pool = pools[target];
    if (a.externalId === undefined) return void problems.push([[...path, 'externalId'], `a ${target} assignment names its target`]);
    if (!items(pool).some(([x]) => x.externalId === a.externalId)) problems.push([[...path, 'externalId'], `no ${target} of the customer has this externalId`]);
  });
  return problems;
}

interface Named {
  path: Path;
  name: string;
  /** The list the record is in: two records of one list never merge. */
  list: string;
}

/**
 * Names that would make two records of one owner one row (docs/import-format.md, "Names"): sites
 * and device groups of a customer, scripts and policies (per type) of the account or of one
 * customer. The database keeps script and policy names unique per owner ignoring case, and the
 * importer matches sites and scripts by name ignoring case, so "HQ" and "hq" would become one row
 * that each re-import renames back and forth. The document is refused with each collision named.
 * The one intended merge stays: the same script or policy, spelt exactly alike, in two locations
 * of one customer (location-scoped content, merged with the later row winning).
 */
function collisionProblems(doc: Loose): Problem[] {
  const problems: Problem[] = [];
  const named = (list: unknown, path: Path, listName: string, prefix: (x: Loose) => string | undefined = () => ''): Named[] =>
    items(list).flatMap(([x, i]) => {
      const name = text(x.name);
      const kind = prefix(x);
      return name === undefined || kind === undefined ? [] : [{ path: [...path, i], name: `${kind}${name}`, list: listName }];
    });
  const policyType = (p: Loose) => text(p.type) && `${p.type as string}|`;
  const check = (records: Named[], what: string, mergesAcrossLists: boolean) => {
    const first = new Map<string, Named>();
    for (const r of records) {
      const key = r.name.toLowerCase();
      const earlier = first.get(key);
      if (!earlier) {
        first.set(key, r);
        continue;
      }
      if (mergesAcrossLists && earlier.list !== r.list && earlier.name === r.name) continue;
      const shown = (n: Named) => n.name.slice(n.name.indexOf('|') + 1);
      const how = earlier.name === r.name ? 'has the same name as' : 'differs only in case from';
      problems.push([[...r.path, 'name'], `${how} ${formatPath(earlier.path, 'brackets')} ("${shown(earlier)}"): ${what} of one owner need names that differ in more than case`]);
    }
  };
  check(named(doc.scripts, ['scripts'], 'account'), 'scripts', false);
  check(named(doc.policies, ['policies'], 'account', policyType), 'policies of one type', false);
  items(doc.customers).forEach(([c, ci]) => {
    const at: Path = ['customers', ci];
    check(named(c.locations, [...at, 'locations'], 'own'), 'locations', false);
    check(named(c.deviceGroups, [...at, 'deviceGroups'], 'own'), 'device groups', false);
    const scoped = (key: 'scripts' | 'policies', prefix?: (x: Loose) => string | undefined) => [
      ...named(c[key], [...at, key], 'own', prefix),
      ...items(c.locations).flatMap(([l, li]) => named(l[key], [...at, 'locations', li, key], `location ${li}`, prefix)),
    ];
    check(scoped('scripts'), 'scripts', true);
    check(scoped('policies', policyType), 'policies of one type', true);
  });
  return problems;
}
