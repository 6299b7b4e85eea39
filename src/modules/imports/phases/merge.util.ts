import { stableJson } from '../../../common/json.util';
import type { Planned } from '../document/import-plan';
import type { ReportConflict } from '../import-report';

export interface Merged<T> {
  winner: Planned<T>;
  /** Every row of the group in document order, the winner last. */
  rows: Planned<T>[];
  overridden: string[];
}

/**
 * Location-scoped content of one customer becomes organization content: rows naming the same
 * thing (a field key, a script or policy name) merge into one, the later row winning (spec
 * 2.10.3). When the rows disagree on `fields`, a conflict is reported.
 */
export function mergeLater<T>(rows: Planned<T>[], keyOf: (t: T) => string, fields: (keyof T & string)[], conflictKind: ReportConflict['kind'], conflicts: ReportConflict[]): Merged<T>[] {
  const groups = new Map<string, Planned<T>[]>();
  for (const r of rows) {
    const k = keyOf(r.item);
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  return [...groups.values()].map((group) => {
    const winner = group[group.length - 1];
    const overridden = group.slice(0, -1);
    const differing = fields.filter((f) => overridden.some((o) => stableJson(o.item[f]) !== stableJson(winner.item[f])));
    if (overridden.length && differing.length) {
      conflicts.push({ kind: conflictKind, name: keyOf(winner.item), winner: winner.ref, overridden: overridden.map((o) => o.ref), fields: differing });
    }
    return { winner, rows: group, overridden: overridden.map((o) => o.ref) };
  });
}
