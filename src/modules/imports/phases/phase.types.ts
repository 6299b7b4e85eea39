import { stableJson } from '../../../common/json.util';
import type { ImportPlan, PhaseName, PlannedCustomer } from '../document/import-plan';
import type { PhaseRecorder } from '../import-report';

export interface PhaseContext {
  importId: string;
  partnerId: string;
  source: string;
  overwrite: boolean;
  out: PhaseRecorder;
  /** Organization of each planned customer (by its ref); null when the customer could not be imported. */
  orgs: Map<string, string | null>;
  /** Adds organizations created in this transaction to its row-level-security scope. */
  addOrgsToScope(orgIds: string[]): Promise<void>;
}

/** One all-or-nothing step of an import; it runs inside one transaction (a dry run shares one for all). */
export interface ImportPhase {
  readonly name: PhaseName;
  run(plan: ImportPlan, ctx: PhaseContext): Promise<void>;
}

/** The customers whose organization is known, with it; the others' records are reported unresolved. */
export function importableCustomers(plan: ImportPlan, ctx: PhaseContext, records: (c: PlannedCustomer) => { ref: string; kind: Parameters<PhaseRecorder['add']>[1]['kind']; externalId?: string }[]): { customer: PlannedCustomer; orgId: string }[] {
  const out: { customer: PlannedCustomer; orgId: string }[] = [];
  for (const customer of plan.customers) {
    const orgId = ctx.orgs.get(customer.ref);
    if (orgId) out.push({ customer, orgId });
    else for (const r of records(customer)) ctx.out.add('unresolved', { ...r, reason: 'the customer was not imported' });
  }
  return out;
}

export const changedFields = <T extends Record<string, unknown>>(a: T, b: T, fields: (keyof T & string)[]): string[] =>
  fields.filter((f) => stableJson(a[f]) !== stableJson(b[f]));

/**
 * The report names changed fields as the document spells them (issue 30: a script's
 * `timeout_seconds` was reported where the document says `timeoutSeconds`). `names` maps the
 * compared name to the document's; names it leaves out are the document's already.
 */
export const documentFields = (fields: string[], names: Record<string, string>): string[] => fields.map((f) => names[f] ?? f);

/** Where a record's site came from: a location in a document, a site name in a CSV file. */
export const siteField = (plan: ImportPlan): string => (plan.format === 'interchange' ? 'locationExternalId' : 'site');
