import type { Problem } from '../../../common/shape/path.util';
import { checkShape } from '../../../common/shape/shape.util';
import { AGENT_FEATURE, MONITORING_FEATURE } from './configuration.features';
import { PAM_FEATURE, SOFTWARE_FEATURE } from './pam.features';
import { PATCH_FEATURE } from './patch.feature';
import type { PolicyFeature, PolicyType } from './policy-feature.types';

/** Every feature a policy may carry. Add a feature by appending it here. */
export const POLICY_FEATURES: readonly PolicyFeature[] = [AGENT_FEATURE, MONITORING_FEATURE, PATCH_FEATURE, PAM_FEATURE, SOFTWARE_FEATURE];

const byName = new Map(POLICY_FEATURES.map((f) => [f.name, f]));

/** Problems of a policy's `features` object for its type; paths relative to `features`. */
export function featureProblems(type: PolicyType, features: unknown): Problem[] {
  if (typeof features !== 'object' || features === null || Array.isArray(features)) return [[[], 'features must be an object keyed by feature name']];
  const problems: Problem[] = [];
  for (const [name, value] of Object.entries(features)) {
    const feature = byName.get(name);
    if (!feature) problems.push([[name], `unknown feature; known: ${POLICY_FEATURES.map((f) => f.name).join(', ')}`]);
    else if (!feature.types.includes(type)) problems.push([[name], `the ${name} feature does not apply to a ${type} policy`]);
    else problems.push(...checkShape(feature.shape, value, [name]));
  }
  return problems;
}
