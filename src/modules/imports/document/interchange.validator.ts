import type { Path, Problem } from '../../content/path.util';
import { checkShape } from '../../content/shape.util';
import { FilterDefinition, filterProblems } from '../../policies/dynamic-groups/device-filter.util';
import { INTERCHANGE_SHAPE } from './interchange.shape';
import type { InterchangeDocument, SourceCustomer, SourceCustomField, SourcePolicy } from './interchange.types';

/**
 * Problems of an interchange document, in document order: first its shape, then the
 * references inside it (locations of a customer, custom-field keys of group filters,
 * assignment targets). The first problem is the one a client fixes first.
 */
export function interchangeProblems(doc: unknown): Problem[] {
  const problems = checkShape(INTERCHANGE_SHAPE, doc);
  return problems.length ? problems : referenceProblems(doc as InterchangeDocument).slice(0, 20);
}

function referenceProblems(doc: InterchangeDocument): Problem[] {
  const problems: Problem[] = [];
  const accountKeys = new Map((doc.customFields ?? []).map((f) => [f.key, f]));
  const customers = new Map(doc.customers.map((c) => [c.externalId, c]));

  (doc.policies ?? []).forEach((p, i) => problems.push(...assignmentProblems(p, ['policies', i], null, customers)));

  doc.customers.forEach((c, ci) => {
    const at: Path = ['customers', ci];
    const locations = new Set((c.locations ?? []).map((l) => l.externalId));
    const inLocations = (list: { locationExternalId?: string | null }[] | undefined, key: string) =>
      (list ?? []).forEach((x, k) => {
        if (x.locationExternalId != null && !locations.has(x.locationExternalId)) problems.push([[...at, key, k, 'locationExternalId'], 'no location of this customer has this externalId']);
      });
    inLocations(c.devices, 'devices');
    inLocations(c.contacts, 'contacts');
    inLocations(c.deviceGroups, 'deviceGroups');

    // Fields of the organization: the customer's own and its locations', later ones overriding earlier ones.
    const orgFields = new Map<string, SourceCustomField>();
    const orgLevel: [Path, SourceCustomField][] = [
      ...(c.customFields ?? []).map((f, k): [Path, SourceCustomField] => [[...at, 'customFields', k], f]),
      ...(c.locations ?? []).flatMap((l, li) => (l.customFields ?? []).map((f, k): [Path, SourceCustomField] => [[...at, 'locations', li, 'customFields', k], f])),
    ];
    for (const [path, f] of orgLevel) {
      if (accountKeys.has(f.key)) problems.push([[...path, 'key'], 'this key is already a partner-wide (account) field']);
      orgFields.set(f.key, f);
    }
    const lookup = (key: string): FilterDefinition | undefined => {
      const f = orgFields.get(key) ?? accountKeys.get(key);
      return f && { type: f.type, options: (f.options ?? []).map((o) => o.trim()) };
    };
    (c.deviceGroups ?? []).forEach((g, k) => problems.push(...filterProblems(g.filter, lookup, [...at, 'deviceGroups', k, 'filter'])));

    (c.policies ?? []).forEach((p, k) => problems.push(...assignmentProblems(p, [...at, 'policies', k], c, customers)));
    (c.locations ?? []).forEach((l, li) => (l.policies ?? []).forEach((p, k) => problems.push(...assignmentProblems(p, [...at, 'locations', li, 'policies', k], c, customers))));
  });
  return problems;
}

/** `owner` null: an account policy, which may target the account or anything in any customer. */
function assignmentProblems(p: SourcePolicy, at: Path, owner: SourceCustomer | null, customers: Map<string, SourceCustomer>): Problem[] {
  const problems: Problem[] = [];
  (p.assignments ?? []).forEach((a, i) => {
    const path: Path = [...at, 'assignments', i];
    if (a.target === 'account') {
      if (owner) problems.push([[...path, 'target'], 'only an account policy can be assigned to the account']);
      return;
    }
    if (owner && a.customerExternalId !== undefined && a.customerExternalId !== owner.externalId) {
      return void problems.push([[...path, 'customerExternalId'], 'a customer policy is assigned inside its own customer']);
    }
    const customer = owner ?? (a.customerExternalId !== undefined ? customers.get(a.customerExternalId) : undefined);
    if (!customer) return void problems.push([[...path, 'customerExternalId'], 'must name a customer of this document']);
    if (a.target === 'customer') return;
    const pool = { location: customer.locations, deviceGroup: customer.deviceGroups, device: customer.devices }[a.target] ?? [];
    if (a.externalId === undefined) return void problems.push([[...path, 'externalId'], `a ${a.target} assignment names its target`]);
    if (!pool.some((x) => x.externalId === a.externalId)) problems.push([[...path, 'externalId'], `no ${a.target} of the customer has this externalId`]);
  });
  return problems;
}
