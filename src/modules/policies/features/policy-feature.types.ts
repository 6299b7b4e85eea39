import type { Shape } from '../../../common/shape/shape.util';

export const POLICY_TYPES = ['configuration', 'patch'] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

/**
 * One feature of a policy: a named block of settings inside `features`, valid for some policy
 * types. Other modules add features (the PAM lifecycle adds `pam` and `software`) by listing
 * theirs in the registry.
 */
export interface PolicyFeature {
  name: string;
  types: readonly PolicyType[];
  description: string;
  shape: Shape;
}
