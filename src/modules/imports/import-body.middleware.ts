import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { text } from 'express';
import { ImportErrors } from './import.errors';

/** Documents may be large: the raw forms (CSV, application/vnd.rmm-import+json) are read up to this. */
export const IMPORT_BODY_LIMIT = 64 * 1024 * 1024;
export const IMPORT_JSON_MEDIA_TYPE = 'application/vnd.rmm-import+json';

const readText = text({ type: ['text/csv', IMPORT_JSON_MEDIA_TYPE], limit: IMPORT_BODY_LIMIT, defaultCharset: 'utf-8' });

/**
 * Reads CSV files and large interchange documents as text for POST /imports. (Ordinary
 * application/json bodies are parsed by the application's JSON parser, with its 1 MB limit.)
 * Failures are thrown so the global filter answers them in the contract shape.
 */
@Injectable()
export class ImportBodyMiddleware implements NestMiddleware {
  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    await new Promise<void>((resolve, reject) =>
      readText(req, res, (err?: { type?: string }) => {
        if (!err) return resolve();
        if (err.type === 'entity.too.large') return reject(ImportErrors.payloadTooLarge());
        if (err.type === 'charset.unsupported' || err.type === 'encoding.unsupported') return reject(ImportErrors.unsupportedMediaType());
        reject(err);
      }),
    );
    next();
  }
}
