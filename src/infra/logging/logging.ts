import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Options } from 'pino-http';
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

/** JSON logs; credentials and secrets never reach them. */
export function pinoOptions(config: AppConfig): Options {
  return {
    level: config.logLevel,
    genReqId: requestId,
    autoLogging: config.nodeEnv !== 'test',
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
    },
  };
}
