import type { NextFunction, Request, Response } from 'express';
import { raw } from 'express';
import { ImportErrors } from './import.errors';
import { utf8Problem } from './body/utf8.util';

export const IMPORT_JSON_MEDIA_TYPE = 'application/vnd.rmm-import+json';

/**
 * What POST /imports reads, per media type (docs/import-format.md, "Requests"). `members` bounds
 * the parsed document (object keys plus array items) before anything walks it: the application's
 * 200,000 for an ordinary JSON body, and for the large-export type enough for its 64 MB (the
 * benchmark's 6 MB document of 60,042 records has about 350,000).
 */
export const IMPORT_BODY_LIMITS = {
  'application/json': { bytes: 1024 * 1024, members: 200_000 },
  [IMPORT_JSON_MEDIA_TYPE]: { bytes: 64 * 1024 * 1024, members: 4_000_000 },
  'text/csv': { bytes: 64 * 1024 * 1024, members: null },
} as const;
export const IMPORT_BODY_DEPTH = 32;

const readSmall = raw({ type: 'application/json', limit: IMPORT_BODY_LIMITS['application/json'].bytes });
const readLarge = raw({ type: ['text/csv', IMPORT_JSON_MEDIA_TYPE], limit: IMPORT_BODY_LIMITS['text/csv'].bytes });

const UTF8 = /^utf-?8$/i;

/**
 * Reads the body of POST /imports as bytes, whatever its media type, and hands the handler UTF-8
 * text. Mounted before the application's JSON parser (src/app.setup.ts), which then finds the body
 * read and leaves it alone: that parser decodes invalid bytes as U+FFFD without a word, and a
 * Latin-1 export would be stored as "Jos� M�ller". Both formats are UTF-8 by definition, so a body
 * that is not is 400 naming the line of the first bad byte, and a declared charset other than
 * UTF-8 is 415. The service parses the JSON and bounds it per media type.
 */
export function readImportBody(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'POST' || req.path !== '/') return next();
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !UTF8.test(charset)) return next(ImportErrors.charsetNotUtf8(charset));
  readSmall(req, res, (err?: unknown) => {
    if (err) return next(bodyError(err));
    readLarge(req, res, (err2?: unknown) => {
      if (err2) return next(bodyError(err2));
      if (Buffer.isBuffer(req.body)) {
        const problem = utf8Problem(req.body);
        if (problem) return next(ImportErrors.notUtf8(problem));
        const text = req.body.toString('utf8');
        req.body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      }
      next();
    });
  });
}

function bodyError(err: unknown): unknown {
  const type = (err as { type?: string }).type;
  if (type === 'entity.too.large') return ImportErrors.payloadTooLarge();
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return ImportErrors.unsupportedMediaType();
  return err;
}
