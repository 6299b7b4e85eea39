import { AppException } from '../../common/errors/app.exception';
import { formatPath, Problem } from '../../common/shape/path.util';
import type { Utf8Problem } from './body/utf8.util';

export const ImportErrors = {
  notFound: () => AppException.notFound('Import not found'),
  matchNotFound: () => AppException.notFound('Match not found'),
  invalidDocument: (problems: Problem[]) =>
    AppException.validation(
      problems.map(([path, message]) => ({ field: formatPath(path, 'brackets'), message })),
      'The import document is invalid; nothing was imported',
    ),
  invalidJson: () => AppException.badRequest('invalid_json', 'Malformed JSON body'),
  unsupportedMediaType: () => new AppException(415, 'unsupported_media_type', 'Send application/json, application/vnd.rmm-import+json or text/csv'),
  notUtf8: (p: Utf8Problem) =>
    AppException.validation(
      [{ field: `line ${p.line}`, message: `byte 0x${p.byte.toString(16).toUpperCase().padStart(2, '0')} at column ${p.column} is not UTF-8; save the file as UTF-8 and send it again` }],
      'The upload is not UTF-8; nothing was imported',
    ),
  charsetNotUtf8: (charset: string) => new AppException(415, 'unsupported_media_type', `Imports are UTF-8; the body declares charset ${charset.slice(0, 40)}`),
  bodyBounds: (message: string) => AppException.validation([{ field: 'body', message }], 'The request body cannot be read as it is'),
  payloadTooLarge: () => new AppException(413, 'payload_too_large', 'Request body is too large'),
  typeRequired: () => AppException.validation([{ field: 'type', message: 'type (contacts or custom-field-values) is required for a CSV import' }]),
  typeNotForJson: () => AppException.validation([{ field: 'type', message: 'type applies to CSV imports only' }]),
  fullAccessRequired: () =>
    AppException.forbidden('forbidden', 'An interchange import needs access to every organization and site of the partner'),
  matchResolved: (status: string) => AppException.conflict('match_resolved', 'This match was already acknowledged', { currentStatus: status }),
  candidateGone: () => AppException.conflict('candidate_gone', 'The existing contact was deleted; acknowledge with create instead'),
  externalIdTaken: () => AppException.conflict('external_id_taken', 'Another contact of this organization already has this externalId'),
};
