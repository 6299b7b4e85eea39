import { HttpException, HttpStatus } from '@nestjs/common';

/**
 * The one exception type modules throw. `code` is a stable snake_case machine code; `error` a
 * human sentence; `extra` fields sit beside them in the body (docs/api-conventions.md).
 */
export class AppException extends HttpException {
  constructor(
    status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super({ code, error: message, ...extra }, status);
    this.message = message;
  }

  static badRequest(code: string, message: string, extra?: Record<string, unknown>) {
    return new AppException(HttpStatus.BAD_REQUEST, code, message, extra);
  }
  static validation(details: { field: string; message: string }[], message = 'Request validation failed') {
    return new AppException(HttpStatus.BAD_REQUEST, 'validation_failed', message, { details });
  }
  static unauthenticated(message = 'Authentication required') {
    return new AppException(HttpStatus.UNAUTHORIZED, 'unauthenticated', message);
  }
  static forbidden(code = 'forbidden', message = 'You do not have permission to do this', extra?: Record<string, unknown>) {
    return new AppException(HttpStatus.FORBIDDEN, code, message, extra);
  }
  static notFound(message = 'Resource not found', code = 'not_found') {
    return new AppException(HttpStatus.NOT_FOUND, code, message);
  }
  static conflict(code: string, message: string, extra?: Record<string, unknown>) {
    return new AppException(HttpStatus.CONFLICT, code, message, extra);
  }
  static gone(code: string, message: string, extra?: Record<string, unknown>) {
    return new AppException(HttpStatus.GONE, code, message, extra);
  }
}
