import { timingSafeEqual, createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../config/app-config';
import type { MetricsService } from './metrics.service';

/** Where Prometheus scrapes: outside the API prefix, out of the OpenAPI document and the request log. */
export const METRICS_PATH = '/metrics';

export type MetricsAccess = 'allow' | 'not_found' | 'unauthorized' | 'forbidden';

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

export const isLoopback = (address: string | undefined): boolean => typeof address === 'string' && LOOPBACK.test(address);

const digest = (value: string) => createHash('sha256').update(value).digest();

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

/**
 * Who may read the metrics. With METRICS_TOKEN set, a caller presenting it as a bearer token, from
 * anywhere. Without it: in production nobody (404, as if there were no such route); elsewhere a
 * caller on this machine only, judged on the client address after TRUST_PROXY (a request that a
 * local proxy forwards for someone else is not local).
 */
export function metricsAccess(
  config: Pick<AppConfig, 'isProduction' | 'metricsToken'>,
  caller: { authorization?: string; socketAddress?: string; clientAddress?: string },
): MetricsAccess {
  if (config.metricsToken) {
    if (bearerMatches(caller.authorization, config.metricsToken)) return 'allow';
    if (config.isProduction || caller.authorization !== undefined) return 'unauthorized';
  } else if (config.isProduction) {
    return 'not_found';
  }
  return isLoopback(caller.socketAddress) && isLoopback(caller.clientAddress) ? 'allow' : 'forbidden';
}

const REFUSALS: Record<Exclude<MetricsAccess, 'allow'>, { status: number; code: string; message: string }> = {
  not_found: { status: 404, code: 'not_found', message: 'Resource not found' },
  unauthorized: { status: 401, code: 'unauthenticated', message: 'Send the metrics token as a bearer token' },
  forbidden: { status: 403, code: 'forbidden', message: 'Metrics answer callers on this machine only unless METRICS_TOKEN is set' },
};

/** GET /metrics, mounted ahead of everything else (no request log line, no session, no transaction). */
export function metricsEndpoint(metrics: MetricsService, config: Pick<AppConfig, 'isProduction' | 'metricsToken'>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    const access = metricsAccess(config, { authorization: req.headers.authorization, socketAddress: req.socket.remoteAddress, clientAddress: req.ip });
    res.setHeader('Cache-Control', 'no-store');
    if (access !== 'allow') {
      const refusal = REFUSALS[access];
      if (access === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      res.status(refusal.status).json({ success: false, statusCode: refusal.status, code: refusal.code, error: refusal.message, requestId: String((req as { id?: unknown }).id ?? '') });
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) => {
        res.setHeader('Content-Type', contentType);
        res.end(body);
      },
      (err: unknown) => next(err),
    );
  };
}

/**
 * Times every request into the duration histogram, labelled with the route template Express
 * matched (`/api/v1/organizations/:id`), never the path itself: a request no route matched is
 * `unmatched`, static files `static`.
 */
export function httpMetrics(metrics: MetricsService, apiPrefix: string) {
  const api = `/${apiPrefix}/`;
  return (req: Request, res: Response, next: NextFunction): void => {
    const end = metrics.httpDuration.startTimer();
    res.once('close', () => {
      const template = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof template === 'string' ? template : req.originalUrl.startsWith(api) ? 'unmatched' : 'static';
      end({ method: req.method, route, status_class: res.writableFinished ? `${Math.floor(res.statusCode / 100)}xx` : 'aborted' });
    });
    next();
  };
}
