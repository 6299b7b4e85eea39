import type { PhaseName } from './document/import-plan';

export const OUTCOMES = ['created', 'updated', 'unchanged', 'heldBack', 'unresolved'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export type ItemKind =
  | 'organization'
  | 'site'
  | 'custom_field'
  | 'device'
  | 'contact'
  | 'custom_field_value'
  | 'device_group'
  | 'script'
  | 'policy'
  | 'policy_assignment';

export type Counts = Record<Outcome, number>;

/** One source record's outcome. No generated ids, so a dry run reports exactly what the real run will. */
export interface ReportItem {
  kind: ItemKind;
  /** Where the record is in the document (customers[0].contacts[3]) or the CSV (line 4). */
  ref: string;
  externalId?: string;
  name?: string;
  reason?: string;
  /** Fields an update changed. */
  fields?: string[];
  /** Existing contact a held-back record resembles. */
  candidateContactId?: string;
  /** Records merged into this one (location-scoped content of one customer). */
  mergedFrom?: string[];
}

/** Two locations of one customer disagreeing about the same field, script or policy: the later row won. */
export interface ReportConflict {
  kind: 'custom_field' | 'script' | 'policy';
  /** key of a field, name of a script or policy */
  name: string;
  winner: string;
  overridden: string[];
  fields: string[];
}

export interface PhaseReport {
  name: PhaseName;
  status: 'completed' | 'failed' | 'not_run';
  counts: Counts;
}

export interface ImportReport {
  dryRun: boolean;
  overwrite: boolean;
  summary: Counts;
  phases: PhaseReport[];
  created: ReportItem[];
  updated: ReportItem[];
  unchanged: ReportItem[];
  heldBack: ReportItem[];
  unresolved: ReportItem[];
  conflicts: ReportConflict[];
}

/** The lists of a report, which a job's phases fill. */
export const REPORT_LISTS = ['created', 'updated', 'unchanged', 'heldBack', 'unresolved', 'conflicts'] as const;

export const zeroCounts = (): Counts => ({ created: 0, updated: 0, unchanged: 0, heldBack: 0, unresolved: 0 });

export function emptyReport(phases: readonly PhaseName[], opts: { dryRun: boolean; overwrite: boolean }): ImportReport {
  return {
    ...opts,
    summary: zeroCounts(),
    phases: phases.map((name) => ({ name, status: 'not_run', counts: zeroCounts() })),
    created: [],
    updated: [],
    unchanged: [],
    heldBack: [],
    unresolved: [],
    conflicts: [],
  };
}

/** What one phase found; merged into the report only when the phase commits. */
export class PhaseRecorder {
  readonly items: Record<Outcome, ReportItem[]> = { created: [], updated: [], unchanged: [], heldBack: [], unresolved: [] };
  readonly conflicts: ReportConflict[] = [];

  add(outcome: Outcome, item: ReportItem): void {
    this.items[outcome].push(item);
  }

  conflict(c: ReportConflict): void {
    this.conflicts.push(c);
  }

  count(): number {
    return OUTCOMES.reduce((n, o) => n + this.items[o].length, 0);
  }
}

export function withPhase(report: ImportReport, phase: PhaseName, rec: PhaseRecorder | null, status: PhaseReport['status']): ImportReport {
  const next: ImportReport = { ...report, summary: { ...report.summary }, phases: report.phases.map((p) => ({ ...p, counts: { ...p.counts } })) };
  const entry = next.phases.find((p) => p.name === phase)!;
  entry.status = status;
  if (!rec) return next;
  for (const o of OUTCOMES) {
    next[o] = [...report[o], ...rec.items[o]];
    entry.counts[o] = rec.items[o].length;
    next.summary[o] += rec.items[o].length;
  }
  next.conflicts = [...report.conflicts, ...rec.conflicts];
  return next;
}
