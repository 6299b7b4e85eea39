import { AppException } from '../../../common/errors/app.exception';

export const ContactErrors = {
  notFound: () => AppException.notFound('Contact not found'),
  siteNotInOrganization: () => AppException.badRequest('site_not_in_organization', 'siteId must be a site of the contact\'s organization'),
  externalIdTaken: () => AppException.conflict('external_id_taken', 'Another contact of this organization already has this externalId'),
};
