import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import pino, { type Logger, type LoggerOptions } from 'pino';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config';
import { RequestContext } from '../context/request-context';
import { activeTraceIds } from '../tracing/tracing-state';

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
 * The logger module's settings: Nest's own logger writes through the one root logger, and no
 * per-request child logger is made (pino-http made one per request, serialising and redacting the
 * request into its bindings whether or not a line was ever written: a fifth of the framework's
 * cost per request). A line written while a request is served carries its id (`reqId`, from the
 * request context); the request line itself is {@link requestLogger}'s.
 */
export function loggerModuleParams(config: AppConfig): Params {
  return { pinoHttp: { logger: rootLogger(config) }, useExisting: true, forRoutes: [] };
}

const roots = new WeakMap<AppConfig, Logger>();

/** The process's logger for a configuration: made once, shared by Nest's logger and the request line. */
export function rootLogger(config: AppConfig): Logger {
  let root = roots.get(config);
  if (!root) {
    const pretty = logFormat(config.nodeEnv, process.stdout.isTTY === true) === 'pretty' ? prettyOutput() : null;
    root = pretty ? pino(pinoOptions(config), pretty) : pino(pinoOptions(config));
    roots.set(config, root);
  }
  return root;
}

export type LogFormat = 'json' | 'pretty';

/**
 * One line of JSON per entry, for log collectors, everywhere but a developer's terminal: there
 * (development, NODE_ENV unset included, with standard output a terminal) a readable line per entry.
 * Piped or redirected output stays JSON in development too, so `npm start | jq` and the tests read it.
 */
export function logFormat(nodeEnv: AppConfig['nodeEnv'], stdoutIsTerminal: boolean): LogFormat {
  return nodeEnv === 'development' && stdoutIsTerminal ? 'pretty' : 'json';
}

/**
 * pino-pretty's formatter, writing each entry synchronously as it is logged (so the start-up banner,
 * written to standard output after the start-up lines, still comes last). Null when pino-pretty is
 * not installed (it is a development dependency: the production image has none), which means JSON.
 */
export function prettyOutput(write: (text: string) => unknown = (text) => process.stdout.write(text)): { write(line: string): void } | null {
  let pinoPretty: typeof import('pino-pretty');
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    pinoPretty = require('pino-pretty') as typeof import('pino-pretty');
  } catch {
    return null;
  }
  const format = pinoPretty.prettyFactory({
    colorize: pinoPretty.isColorSupported,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,context',
    messageFormat: '{if context}[{context}] {end}{msg}',
    singleLine: true,
  });
  return { write: (line) => void write(format(line)) };
}

/**
 * JSON logs; credentials and secrets never reach them. A line written while a request is served
 * carries its id (`reqId`), and with tracing on, the ids of the active span (`trace_id`, `span_id`:
 * search the trace back-end for the trace of a request seen in the logs, and the reverse).
 */
export function pinoOptions(config: AppConfig): LoggerOptions {
  return {
    level: config.logLevel,
    hooks: { logMethod: demoteStartupInventory },
    mixin: () => {
      const reqId = RequestContext.requestId();
      const trace = activeTraceIds();
      if (trace) return reqId ? { reqId, ...trace } : trace;
      return reqId ? { reqId } : {};
    },
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
  };
}

type LoggedRequest = IncomingMessage & { id?: unknown; originalUrl?: string };

/**
 * One line per answered request, at info: `request completed`, or `request errored` for a 5xx or a
 * response cut off before it was sent, with the request id, the method, the path without its query
 * and the status, never a header or a body. (Errors themselves are logged by the exception filter at
 * their own level; a 503 of readiness while draining is not an error of the service.) Nothing is
 * built for a request unless info is enabled; the test environment writes none.
 */
export function requestLogger(logger: Logger, config: Pick<AppConfig, 'nodeEnv'>) {
  const enabled = config.nodeEnv !== 'test';
  return (req: LoggedRequest, res: ServerResponse, next: () => void): void => {
    if (enabled && logger.isLevelEnabled('info')) {
      const start = Date.now();
      res.once('close', () => {
        const failed = res.statusCode >= 500 || !res.writableFinished;
        const url = (req.originalUrl ?? req.url ?? '').split('?')[0];
        logger.info(
          { req: { id: req.id, method: req.method, url }, res: responseLine(res), responseTime: Date.now() - start },
          failed ? 'request errored' : 'request completed',
        );
      });
    }
    next();
  };
}
