import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { QueryFailedError } from 'typeorm';
import { AppException } from '../errors/app.exception';
import { PARTNER_WIDE_WRITE_REFUSED } from '../principal';

interface ErrorBody {
  success: false;
  statusCode: number;
  code: string;
  error: string;
  requestId: string;
  [extra: string]: unknown;
}

const DEFAULT_CODES: Record<number, [string, string]> = {
  400: ['bad_request', 'The request is invalid'],
  401: ['unauthenticated', 'Authentication required'],
  403: ['forbidden', 'You do not have permission to do this'],
  404: ['not_found', 'Resource not found'],
  405: ['method_not_allowed', 'Method not allowed'],
  409: ['conflict', 'The request conflicts with the current state'],
  413: ['payload_too_large', 'Request body is too large'],
  415: ['unsupported_media_type', 'Unsupported content type'],
  429: ['rate_limited', 'Too many requests, slow down'],
};

/**
 * Database errors that can only come from the input (a NUL byte, a value out of range, a duplicate
 * the service did not anticipate) are the caller's 4xx, never a 500. A row-level-security refusal
 * means the caller wrote into another tenant: answered as not found, like every cross-tenant id;
 * a partner-wide write by a selected-organizations technician is the one refusal answered 403.
 */
/** Raised by the database when a caller without all-organization access writes a partner-owned row. */
const PARTNER_WIDE_DENIED = 'partner_wide_write_denied';

function postgresError(e: unknown): { statusCode: number; code: string; error: string } | null {
  if (!(e instanceof QueryFailedError)) return null;
  const code = (e.driverError as { code?: string } | undefined)?.code ?? '';
  if (['22021', '22P02', '22001', '22003', '22007', '22008', '22023', '2201B'].includes(code)) {
    return { statusCode: 400, code: 'invalid_input', error: 'A value in the request is not acceptable' };
  }
  if (code === '23505') return { statusCode: 409, code: 'conflict', error: 'A resource with the same unique value already exists' };
  if (code === '23503') return { statusCode: 409, code: 'reference_conflict', error: 'The request refers to a resource that does not exist or is still referenced' };
  if (code === '23514' || code === '23502') return { statusCode: 400, code: 'invalid_input', error: 'A value in the request is not acceptable' };
  if (code === '42501' && e.message.startsWith(PARTNER_WIDE_DENIED)) {
    return { statusCode: 403, code: 'forbidden', error: PARTNER_WIDE_WRITE_REFUSED };
  }
  if (code === '42501') return { statusCode: 404, code: 'not_found', error: 'Resource not found' };
  if (code === '40001' || code === '40P01') return { statusCode: 409, code: 'conflict', error: 'The request conflicted with a concurrent change; retry it' };
  return null;
}

/** Produces the error body of CONTRACT.md §1 for every failure, whatever threw it. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request & { id?: string }>();
    const res = ctx.getResponse<Response>();
    const requestId = String(req?.id ?? res.getHeader('x-request-id') ?? '');
    const body = this.toBody(exception, requestId, req);
    if (body.statusCode === 429) {
      const retry = Number(body.retryAfter ?? 60);
      body.retryAfter = retry;
      res.setHeader('Retry-After', String(retry));
    }
    if (res.headersSent) return;
    res.status(body.statusCode).json(body);
  }

  private toBody(exception: unknown, requestId: string, req: Request): ErrorBody {
    if (exception instanceof AppException) {
      return { success: false, statusCode: exception.getStatus(), code: exception.code, error: exception.message, requestId, ...exception.extra };
    }
    if (exception instanceof ThrottlerException) {
      const retryAfter = Number((req?.res?.getHeader('retry-after') as string) ?? 60) || 60;
      return { success: false, statusCode: 429, code: 'rate_limited', error: 'Too many requests, slow down', requestId, retryAfter };
    }
    const pg = postgresError(exception);
    if (pg) return { success: false, requestId, ...pg };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500) {
        const [code, message] = DEFAULT_CODES[status] ?? ['error', exception.message];
        return this.plain(status, code, status === 404 ? 'Resource not found' : message, requestId);
      }
    }
    this.logger.error({ requestId, err: exception }, 'Unhandled error');
    return this.plain(HttpStatus.INTERNAL_SERVER_ERROR, 'internal_error', 'Internal server error', requestId);
  }

  private plain(statusCode: number, code: string, error: string, requestId: string): ErrorBody {
    return { success: false, statusCode, code, error, requestId };
  }
}
