import { AppException } from '../../common/errors/app.exception';
import { CommonErrors } from '../../common/errors/common.errors';

export const TenancyErrors = {
  organizationNotFound: CommonErrors.organizationNotFound,
  partnerRequired: () => AppException.forbidden('partner_scope_required', 'Only a partner-scope session can create organizations'),
  partnerScopeRequired: (what: string) => AppException.forbidden('partner_scope_required', `${what} needs a partner-scope session`),
  siteNotFound: () => AppException.notFound('Site not found'),
  deviceGroupNotFound: () => AppException.notFound('Device group not found'),
  deviceNotFound: () => AppException.notFound('Device not found'),
  groupMemberNotFound: () => AppException.notFound('The device is not a member of this group'),
  roleNotFound: () => AppException.notFound('Role not found'),
  userNotFound: () => AppException.notFound('User not found'),
  membershipNotFound: () => AppException.notFound('Membership not found'),
  siteAccessDenied: CommonErrors.siteAccessDenied,
  privilegeEscalation: (permissions: string[]) =>
    AppException.forbidden('privilege_escalation', 'You cannot grant permissions beyond your own', { permissions }),
  orgAccessEscalation: () => AppException.forbidden('privilege_escalation', 'You cannot grant access to organizations beyond your own'),
  nameTaken: (what: string) => AppException.conflict('name_taken', `A ${what} with this name already exists`),
  emailTaken: () => AppException.conflict('email_taken', 'A user with this email already exists'),
  membershipExists: () => AppException.conflict('membership_exists', 'The user already has this membership'),
  siteInUse: () => AppException.conflict('site_in_use', 'The site still has devices; move or decommission them first'),
  roleInUse: () => AppException.conflict('role_in_use', 'The role is still assigned; reassign its members first'),
  roleScopeMismatch: (owner: string) => AppException.badRequest('role_scope_mismatch', `The role must be a role of the same ${owner}`),
  siteOutsideOrgAccess: () => AppException.badRequest('site_outside_org_access', 'Every site must belong to one of the organizations granted'),
  deviceDecommissioned: () => AppException.conflict('device_decommissioned', 'A decommissioned device cannot be enrolled'),
  invalidField: (field: string, message: string) => AppException.validation([{ field, message }]),
};
