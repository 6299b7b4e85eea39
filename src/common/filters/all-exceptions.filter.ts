import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { AppException } from '../errors/app.exception';
import { PARTNER_WIDE_WRITE_REFUSED } from '../principal';
import { PERSON_OUT_OF_REACH, PERSON_OUT_OF_REACH_MESSAGE } from '../person-authority';

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

/** Raised by the database when a caller without all-organization access writes a partner-owned row. */
const PARTNER_WIDE_DENIED = 'partner_wide_write_denied';

type Answer = { statusCode: number; code: string; error: string };

const INVALID_INPUT: Answer = { statusCode: 400, code: 'invalid_input', error: 'A value in the request is not acceptable' };
const UNIQUE_CONFLICT: Answer = { statusCode: 409, code: 'conflict', error: 'A resource with the same unique value already exists' };
const REFERENCE_CONFLICT: Answer = { statusCode: 409, code: 'reference_conflict', error: 'The request refers to a resource that does not exist or is still referenced' };

/** The SQLSTATE of a PostgreSQL error, as TypeORM wraps it or as pg raises it; '' for anything else. */
function sqlState(e: unknown): string {
  if (e instanceof QueryFailedError) return (e.driverError as { code?: string } | undefined)?.code ?? '';
  if (e instanceof DatabaseError) return e.code ?? '';
  return '';
}

/**
 * The one place PostgreSQL's errors become answers; no service maps them to avoid a 500.
 * Errors that only the input can cause are the caller's: every data exception (class 22: a NUL
 * character, invalid UTF-8, a value out of range or too long, a malformed id or date, a bad
 * pattern), every integrity violation (class 23), and the limits a value can exceed (class 54:
 * an index row or an array too large, an expression too deep). A duplicate or a dangling or still
 * used reference is 409; the rest is 400. A row-level-security refusal means the caller wrote
 * into another tenant: answered as not found, like every cross-tenant id; a partner-wide write by
 * a selected-organizations technician is the one refusal answered 403. A serialization failure or
 * deadlock is 409, to retry. The answer never carries PostgreSQL's message.
 */
export function postgresError(e: unknown): Answer | null {
  const code = sqlState(e);
  if (!/^[0-9A-Z]{5}$/.test(code)) return null;
  if (code === '23505' || code === '23P01') return UNIQUE_CONFLICT;
  if (code === '23503' || code === '23001') return REFERENCE_CONFLICT;
  if (code.startsWith('22') || code.startsWith('23') || code === '54000' || code === '54001') return INVALID_INPUT;
  if (code === '42501' && (e as Error).message.startsWith(PARTNER_WIDE_DENIED)) {
    return { statusCode: 403, code: 'forbidden', error: PARTNER_WIDE_WRITE_REFUSED };
  }
  if (code === '42501' && (e as Error).message.startsWith(PERSON_OUT_OF_REACH)) {
    return { statusCode: 403, code: PERSON_OUT_OF_REACH, error: PERSON_OUT_OF_REACH_MESSAGE };
  }
  if (code === '42501') return { statusCode: 404, code: 'not_found', error: 'Resource not found' };
  if (code === '40001' || code === '40P01') return { statusCode: 409, code: 'conflict', error: 'The request conflicted with a concurrent change; retry it' };
  return null;
}

/** Seconds a client is told to wait (Retry-After) when the database cannot serve the request. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

const DATABASE_UNAVAILABLE: Answer = { statusCode: 503, code: 'database_unavailable', error: 'The database is unavailable; retry shortly' };
const DATABASE_TIMEOUT: Answer = { statusCode: 503, code: 'database_unavailable', error: 'The database did not answer in time; retry shortly' };

/**
 * SQLSTATEs of a server that cannot serve now: connection exceptions (class 08), a server
 * shutting down or restarting (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot connect
 * now), too many connections (53300) and a session ended for idling in a transaction (25P03).
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '53000', '25P03']);
/** Network failures of a connection (to PostgreSQL, as the pool raises them). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/** What pg and pg-pool raise, without a code, for a connection lost, refused or not obtained in time. */
const CONNECTION_MESSAGES =
  /^(timeout exceeded when trying to connect|Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Connection ended unexpectedly)$/;

/** The error, what TypeORM wrapped (driverError) and what it was caused by, a few levels deep. */
function chain(e: unknown): object[] {
  const out: object[] = [];
  const queue: unknown[] = [e];
  while (queue.length && out.length < 6) {
    const x = queue.shift();
    if (typeof x !== 'object' || x === null || out.includes(x)) continue;
    out.push(x);
    queue.push((x as { driverError?: unknown }).driverError, (x as { cause?: unknown }).cause);
  }
  return out;
}

/**
 * The database could not serve the request: unreachable, restarting, out of connections, or a
 * statement cancelled by statement_timeout (57014). Answered 503 with Retry-After, never 500:
 * nothing is wrong with the request, and the same request succeeds once the database answers.
 */
export function databaseUnavailable(e: unknown): Answer | null {
  for (const x of chain(e)) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (code === '57014') return DATABASE_TIMEOUT;
      if (code.startsWith('08') && /^[0-9A-Z]{5}$/.test(code)) return DATABASE_UNAVAILABLE;
      if (UNAVAILABLE_STATES.has(code) || NETWORK_CODES.has(code)) return DATABASE_UNAVAILABLE;
    }
    if (x instanceof Error && CONNECTION_MESSAGES.test(x.message)) {
      return /timeout/.test(x.message) ? DATABASE_TIMEOUT : DATABASE_UNAVAILABLE;
    }
  }
  return null;
}

/** Why the database was unavailable, for the log: the SQLSTATE or network code, else pg's fixed message (never SQL or values). */
function unavailableReason(e: unknown): string {
  for (const x of chain(e)) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string' && code) return code;
  }
  for (const x of chain(e)) if (x instanceof Error && CONNECTION_MESSAGES.test(x.message)) return x.message;
  return 'unknown';
}

/**
 * Errors that are not Nest exceptions but were raised for the request itself: http-errors marked
 * `expose` (what the body parsers and Express raise) and Express's URIError for a path parameter
 * that is not valid percent-encoding. Their 4xx status with the standard code and sentence, never
 * their message. (A status on any other error, e.g. an upstream response's, stays a 500.)
 */
function clientErrorStatus(e: unknown): number | null {
  if (typeof e !== 'object' || e === null) return null;
  const { status, expose } = e as { status?: unknown; expose?: unknown };
  if (expose !== true && !(e instanceof URIError)) return null;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 500 ? status : null;
}

/** Produces the error body of docs/api-conventions.md for every failure, whatever threw it. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request & { id?: string }>();
    const res = ctx.getResponse<Response>();
    const requestId = String(req?.id ?? res.getHeader('x-request-id') ?? '');
    const body = this.toBody(exception, requestId, req);
    if (body.statusCode === 429 || body.code === 'database_unavailable') {
      const retry = Number(body.retryAfter ?? 60);
      body.retryAfter = retry;
      res.setHeader('Retry-After', String(retry));
    }
    if (res.headersSent) return;
    // JSON whatever the handler had set before it failed (e.g. the SAML metadata's XML type).
    res.status(body.statusCode).type('application/json').json(body);
  }

  private toBody(exception: unknown, requestId: string, req: Request): ErrorBody {
    if (exception instanceof AppException) {
      return { success: false, statusCode: exception.getStatus(), code: exception.code, error: exception.message, requestId, ...exception.extra };
    }
    if (exception instanceof ThrottlerException) {
      const retryAfter = Number((req?.res?.getHeader('retry-after') as string) ?? 60) || 60;
      return { success: false, statusCode: 429, code: 'rate_limited', error: 'Too many requests, slow down', requestId, retryAfter };
    }
    const unavailable = databaseUnavailable(exception);
    if (unavailable) {
      this.logger.warn({ requestId, reason: unavailableReason(exception) }, 'Database unavailable: answered 503');
      return { success: false, requestId, ...unavailable, retryAfter: DATABASE_RETRY_AFTER_SECONDS };
    }
    const pg = postgresError(exception);
    if (pg) return { success: false, requestId, ...pg };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500) {
        const [code, message] = DEFAULT_CODES[status] ?? ['error', exception.message];
        return this.plain(status, code, status === 404 ? 'Resource not found' : message, requestId);
      }
    } else {
      const status = clientErrorStatus(exception);
      if (status !== null) {
        const [code, message] = DEFAULT_CODES[status] ?? DEFAULT_CODES[400];
        return this.plain(status, code, message, requestId);
      }
    }
    this.logger.error({ requestId, err: exception }, 'Unhandled error');
    return this.plain(HttpStatus.INTERNAL_SERVER_ERROR, 'internal_error', 'Internal server error', requestId);
  }

  private plain(statusCode: number, code: string, error: string, requestId: string): ErrorBody {
    return { success: false, statusCode, code, error, requestId };
  }
}
