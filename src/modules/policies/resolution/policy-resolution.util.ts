import type { TargetType } from '../policy.dto';

/** Closest first (spec P2.5 and 2.10.6): device, device group, site, organization, partner. */
export const LEVELS_CLOSEST_FIRST: readonly TargetType[] = ['device', 'device_group', 'site', 'organization', 'partner'];

/** Where a configuration policy reaches a device: one assignment, with the policy's settings of one feature. */
export interface AppliedPolicy<S = unknown> {
  policyId: string;
  policyName: string;
  /** Changes whenever the policy's settings do; lets callers cache what they derive from `settings`. */
  policyUpdatedAt: Date;
  level: TargetType;
  priority: number;
  assignedAt: Date;
  assignmentId: string;
  settings: S;
}

/**
 * Resolution order: the closer level first, then the lower priority number; ties (same level and
 * priority) go to the older assignment, then the smaller assignment id, so that the outcome never
 * depends on the order rows come back in.
 */
export function compareApplied(a: AppliedPolicy, b: AppliedPolicy): number {
  const level = LEVELS_CLOSEST_FIRST.indexOf(a.level) - LEVELS_CLOSEST_FIRST.indexOf(b.level);
  if (level !== 0) return level;
  if (a.priority !== b.priority) return a.priority - b.priority;
  const age = a.assignedAt.getTime() - b.assignedAt.getTime();
  if (age !== 0) return age;
  return a.assignmentId < b.assignmentId ? -1 : a.assignmentId > b.assignmentId ? 1 : 0;
}

/** Policies in resolution order, each once (at its closest assignment). */
export function closestFirst<S>(applied: readonly AppliedPolicy<S>[]): AppliedPolicy<S>[] {
  const seen = new Set<string>();
  return [...applied].sort(compareApplied).filter((p) => !seen.has(p.policyId) && !!seen.add(p.policyId));
}

/**
 * The value of one setting: the closest policy that sets it wins. A policy that carries the
 * feature without this setting does not decide, so a farther policy (or the default) still can.
 */
export function resolveSetting<V>(applied: readonly AppliedPolicy[], key: string, isValue: (v: unknown) => v is V, fallback: V): V {
  for (const p of closestFirst(applied)) {
    const settings = p.settings;
    if (settings && typeof settings === 'object' && !Array.isArray(settings)) {
      const value = (settings as Record<string, unknown>)[key];
      if (isValue(value)) return value;
    }
  }
  return fallback;
}
