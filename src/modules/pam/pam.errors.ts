import { AppException } from '../../common/errors/app.exception';
import { CommonErrors } from '../../common/errors/common.errors';

/** Error codes of the PAM control plane (docs/api-conventions.md, docs/pam-rules.md, docs/pam-lifecycle.md). */
export const PamErrors = {
  organizationNotFound: () => AppException.notFound('Organization not found'),
  ruleNotFound: () => AppException.notFound('PAM rule not found'),
  signerGroupNotFound: () => AppException.notFound('Signer group not found'),
  siteAccessDenied: () => AppException.forbidden('site_access_denied', 'You do not have access to this site'),
  orgRequired: () => CommonErrors.orgIdRequired(),
  siteOutsideOrg: () => AppException.validation([{ field: 'siteId', message: 'siteId must be a site of the organization' }]),
  signerGroupOutsideOrg: () =>
    AppException.validation([{ field: 'matchSignerGroupId', message: 'matchSignerGroupId must be a signer group of the organization' }]),
  invalidRuleShape: (message: string) => AppException.badRequest('invalid_rule_shape', message),
  riskTierUnreachable: (message: string, validTiers: number[]) =>
    AppException.badRequest('pam_rule_risk_tier_unreachable', message, { validTiers }),
  signerGroupNameTaken: () => AppException.conflict('name_taken', 'A signer group with this name already exists in the organization'),
  signerGroupInUse: (ruleCount: number) =>
    AppException.conflict('signer_group_in_use', `The signer group is still used by ${ruleCount} rule(s); change or delete them first`, { ruleCount }),
};
