import { AppException } from '../../../common/errors/app.exception';

export const AgentCommandErrors = {
  notFound: () => AppException.notFound('Command not found'),
  alreadyReported: (currentStatus: string) => AppException.conflict('command_already_reported', 'The result of this command was already reported', { currentStatus }),
};
