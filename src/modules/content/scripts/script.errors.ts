import { AppException } from '../../../common/errors/app.exception';
import { formatPath, Problem } from '../../../common/shape/path.util';

export const ScriptErrors = {
  notFound: () => AppException.notFound('Script not found'),
  nameTaken: () => AppException.conflict('name_taken', 'A script with this name already exists for this owner'),
  invalid: (problems: Problem[]) =>
    AppException.validation(problems.map(([path, message]) => ({ field: formatPath(path, 'dots'), message })), 'The script is invalid'),
};
