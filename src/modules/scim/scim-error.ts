import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { MetricsService } from '../../infra/metrics/metrics.service';
import { AppException } from '../../common/errors/app.exception';

export const SCIM_MEDIA_TYPE = 'application/scim+json';
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/** An error in the form of RFC 7644 §3.12: `status` is a string, `scimType` names a 400/409 cause. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
  }

  static badRequest(scimType: ScimType, detail: string): ScimError {
    return new ScimError(400, detail, scimType);
  }
  static notFound(detail = 'Resource not found'): ScimError {
    return new ScimError(404, detail);
  }
  static conflict(detail: string): ScimError {
    return new ScimError(409, detail, 'uniqueness');
  }
}

export function scimErrorBody(status: number, detail: string, scimType?: string): Record<string, unknown> {
  return { schemas: [SCIM_ERROR_SCHEMA], ...(scimType ? { scimType } : {}), detail, status: String(status) };
}

const PG_TO_SCIM: Record<string, { status: number; scimType?: ScimType }> = {
  '23505': { status: 409, scimType: 'uniqueness' },
  '23P01': { status: 409, scimType: 'uniqueness' },
  '40001': { status: 409 },
  '40P01': { status: 409 },
};

/**
 * Every failure on a SCIM route, the guard's 401 included (with `WWW-Authenticate: Bearer`), answered
 * in the SCIM error form with `application/scim+json`. Known database refusals keep their 4xx (unique violations 409
 * `uniqueness`, data exceptions 400 `invalidValue`); anything else is 500 with a fixed sentence,
 * never the internal text. (Body-parser failures happen before routing and keep the service's
 * own error form: docs/identity-lifecycle.md.)
 */
@Catch()
export class ScimExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly metrics: MetricsService) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const { status, detail, scimType } = this.describe(error);
    const req = host.switchToHttp().getRequest<Request>();
    this.metrics.scim(req.method, (req.route as { path?: string } | undefined)?.path, status);
    // RFC 7644 §2 (and RFC 6750 §3): a 401 names the scheme the client must use.
    if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="SCIM"');
    res.status(status).type(SCIM_MEDIA_TYPE).send(JSON.stringify(scimErrorBody(status, detail, scimType)));
  }

  private describe(error: unknown): { status: number; detail: string; scimType?: string } {
    if (error instanceof ScimError) return { status: error.status, detail: error.detail, scimType: error.scimType };
    if (error instanceof AppException) {
      const status = error.getStatus();
      return { status, detail: error.message, scimType: status === 400 ? 'invalidValue' : undefined };
    }
    if (error instanceof HttpException) return { status: error.getStatus(), detail: error.message };
    const code = (error as { code?: unknown; driverError?: { code?: unknown } })?.driverError?.code ?? (error as { code?: unknown })?.code;
    if (typeof code === 'string') {
      const known = PG_TO_SCIM[code];
      if (known) return { status: known.status, detail: known.status === 409 ? 'The change conflicts with an existing resource or a concurrent change' : 'Invalid value', scimType: known.scimType };
      if (code.startsWith('22') || code.startsWith('23')) return { status: 400, detail: 'A value is not acceptable', scimType: 'invalidValue' };
    }
    this.logger.error({ err: error }, 'Unhandled error on a SCIM route');
    return { status: 500, detail: 'Internal error' };
  }
}
