import { Param, ParseUUIDPipe, Query } from '@nestjs/common';
import { AppException } from '../errors/app.exception';

const invalidId = () => AppException.badRequest('invalid_id', 'The id in the path is not a valid UUID');

/** A path id that must be a UUID: anything else is 400 invalid_id (docs/api-conventions.md). */
export const UuidParam = (name = 'id') => Param(name, new ParseUUIDPipe({ exceptionFactory: invalidId }));

export const UuidQuery = (name: string) =>
  Query(name, new ParseUUIDPipe({ optional: true, exceptionFactory: () => AppException.validation([{ field: name, message: `${name} must be a UUID` }]) }));
