import { AppException } from '../../../common/errors/app.exception';

export const CustomFieldErrors = {
  notFound: () => AppException.notFound('Custom field not found'),
  keyTaken: (key: string) => AppException.conflict('key_taken', `A custom field with key "${key}" already applies to this organization`, { key }),
  invalidDefinition: (problems: [string, string][]) =>
    AppException.validation(problems.map(([field, message]) => ({ field, message })), 'The custom field definition is invalid'),
  invalidValue: (message: string) => AppException.validation([{ field: 'value', message }], 'The value does not fit the custom field'),
  notApplicable: () => AppException.badRequest('custom_field_not_applicable', 'This custom field does not apply to the device\'s organization'),
  optionInUse: (options: string[]) =>
    AppException.conflict('option_in_use', 'Devices still hold values using options that would be removed', { options }),
  /** `groupIds`: only the referencing groups the caller can see; others may exist in organizations out of its reach. */
  inUseByGroups: (groupIds: string[]) =>
    AppException.conflict('custom_field_in_use', 'Dynamic device groups filter on this custom field', { groupIds }),
  valueNotFound: () => AppException.notFound('The device has no value for this custom field'),
};
