import { ValidateBy, ValidationOptions } from 'class-validator';

export const PERMISSION_RESOURCES = [
  'organizations',
  'devices',
  'users',
  'audit',
  'roles',
  'sso',
  'pam',
  'policies',
  'contacts',
  'scripts',
  'custom-fields',
  'imports',
] as const;
export const PERMISSION_ACTIONS = ['read', 'write', 'execute', '*'] as const;

const RESOURCES: ReadonlySet<string> = new Set(PERMISSION_RESOURCES);
const ACTIONS: ReadonlySet<string> = new Set(PERMISSION_ACTIONS);

/** `*`, or `resource:action` from the fixed sets. */
export function isPermission(value: unknown): value is string {
  if (value === '*') return true;
  if (typeof value !== 'string') return false;
  const parts = value.split(':');
  return parts.length === 2 && RESOURCES.has(parts[0]) && ACTIONS.has(parts[1]);
}

/**
 * Whether holding `held` already confers `wanted`: a wildcard is only conferred by an equal
 * or wider wildcard, so `devices:read` + `devices:write` does not cover `devices:*`.
 */
export function covers(held: readonly string[], wanted: string): boolean {
  if (held.includes('*')) return true;
  if (wanted === '*') return false;
  const [resource] = wanted.split(':');
  return held.includes(wanted) || held.includes(`${resource}:*`);
}

/** The permissions of `wanted` that `held` does not confer (empty when it is no escalation). */
export function notCovered(held: readonly string[], wanted: readonly string[]): string[] {
  return [...new Set(wanted.filter((p) => !covers(held, p)))];
}

/** Sorted and without duplicates, as stored. */
export function normalizePermissions(permissions: readonly string[]): string[] {
  return [...new Set(permissions)].sort();
}

export const IsPermission = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isPermission',
      validator: {
        validate: (value) => isPermission(value),
        defaultMessage: (args) =>
          `${args?.property ?? 'permission'} must hold '*' or 'resource:action' with resource one of ${PERMISSION_RESOURCES.join(', ')} and action one of ${PERMISSION_ACTIONS.join(', ')}`,
      },
    },
    options,
  );
