import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import type { LoggerOptions } from 'pino';
import type { Options } from 'pino-http';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Request id: the caller's X-Request-Id when it is safe to echo, else a new UUID. */
export function requestId(req: IncomingMessage & { id?: unknown }, res: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID();
  req.id = id;
  res.setHeader('x-request-id', id);
  return id;
}

/**
 * Nest's start-up inventory: a line per module initialised and per route mapped (about 220
 * lines). Logged at debug instead of info, so a start shows what an operator needs to read:
 * configuration warnings, the start, and the banner. LOG_LEVEL=debug shows the route table.
 */
export const STARTUP_INVENTORY_CONTEXTS: ReadonlySet<string> = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

const demoteStartupInventory: NonNullable<LoggerOptions['hooks']>['logMethod'] = function (args, method, level) {
  const first: unknown = args[0];
  const context = first !== null && typeof first === 'object' ? (first as { context?: unknown }).context : undefined;
  if (level === this.levels.values.info && typeof context === 'string' && STARTUP_INVENTORY_CONTEXTS.has(context)) {
    return this.debug(...(args as Parameters<typeof this.debug>));
  }
  return method.apply(this, args);
};

/** The response as a request line records it: the status, never the headers (cookies, tokens, CSP…). */
function responseLine(res: { statusCode: number | null }): { statusCode: number | null } {
  return { statusCode: res.statusCode };
}

/**
 * The logger module's settings. The request logger (request ids, the CLS context) runs for every
 * route under the global prefix: `{*path}` is the named wildcard of Express 5 routes (nestjs-pino's
 * default, the legacy `*`, made Nest warn "Unsupported route path" on every start).
 */
export function loggerModuleParams(config: AppConfig): Params {
  return { pinoHttp: pinoOptions(config), forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }] };
}

/** JSON logs; credentials and secrets never reach them. */
export function pinoOptions(config: AppConfig): Options {
  return {
    level: config.logLevel,
    genReqId: requestId,
    autoLogging: config.nodeEnv !== 'test',
    hooks: { logMethod: demoteStartupInventory },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        'req.body',
        '*.password',
        '*.clientSecret',
        '*.client_secret',
        '*.accessToken',
        '*.refreshToken',
        '*.access_token',
        '*.refresh_token',
        '*.id_token',
        '*.token',
        '*.code',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url?.split('?')[0] }),
      res: responseLine,
    },
  };
}
