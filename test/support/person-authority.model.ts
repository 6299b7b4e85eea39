/**
 * The rule of acting on a person written a second time, as plainly as it reads in
 * docs/security.md, so the tests can hold the database's rule and every route against it.
 * A grant or a holding: a role's permissions, the organizations (null: all) and sites (null: all) it reaches.
 */
export interface Reach {
  permissions: readonly string[];
  orgIds: readonly string[] | null;
  siteIds: readonly string[] | null;
}

/** Holding `held` confers `wanted`: `*` confers all, `resource:*` its resource, a wildcard only by an equal or wider one. */
export function confers(held: readonly string[], wanted: string): boolean {
  if (held.includes('*')) return true;
  if (wanted === '*') return false;
  return held.includes(wanted) || held.includes(`${wanted.split(':')[0]}:*`);
}

const within = (inner: readonly string[] | null, outer: readonly string[] | null) => outer === null || (inner !== null && inner.every((x) => outer.includes(x)));

/** The actor's grant covers everything the target holds: every permission, organization and site. */
export function covers(actor: Reach, target: Reach): boolean {
  return target.permissions.every((p) => confers(actor.permissions, p)) && within(target.orgIds, actor.orgIds) && within(target.siteIds, actor.siteIds);
}

/** May an actor with these live grants in a tenant act on a target holding this there (nothing: always)? */
export function mayActOn(actorGrants: readonly Reach[], targetHolding: Reach | null): boolean {
  return targetHolding === null || actorGrants.some((g) => covers(g, targetHolding));
}
