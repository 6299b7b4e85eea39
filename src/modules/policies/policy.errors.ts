import { AppException } from '../../common/errors/app.exception';
import { formatPath, Problem } from '../../common/shape/path.util';

export const PolicyErrors = {
  notFound: () => AppException.notFound('Policy not found'),
  assignmentNotFound: () => AppException.notFound('Policy assignment not found'),
  groupNotFound: () => AppException.notFound('Dynamic device group not found'),
  nameTaken: (what: string) => AppException.conflict('name_taken', `A ${what} with this name already exists for this owner`),
  invalid: (root: string, problems: Problem[]) =>
    AppException.validation(problems.map(([path, message]) => ({ field: formatPath([root, ...path], 'dots'), message })), `The ${root} are invalid`),
  targetNotFound: () => AppException.badRequest('target_not_found', 'The assignment target does not exist or is not reachable by this policy'),
  targetLevelNotAllowed: (level: string, scope: string) =>
    AppException.badRequest('target_level_not_allowed', `A ${scope} policy cannot be assigned at ${level} level`),
  assignmentExists: () => AppException.conflict('assignment_exists', 'The policy is already assigned to this target'),
  siteNotInOrganization: () => AppException.badRequest('site_not_in_organization', 'siteId must be a site of the group\'s organization'),
  groupInUse: (assignmentCount: number) =>
    AppException.conflict('group_in_use', 'Policies are assigned to this group; remove the assignments first', { assignmentCount }),
};
