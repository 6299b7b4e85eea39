import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { loadConfig, type AppConfig } from '../config/app-config';
import { requestContextMiddleware } from '../context/request-context';
import { installTracing, stopTracing } from '../tracing/tracing-state';
import { logFormat, pinoOptions, prettyOutput, requestId, requestLogger } from './logging';

/** Every JSON line written through the options, parsed. */
function capture(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { stream, lines };
}

const config = (logLevel: string) => ({ logLevel, nodeEnv: 'production' }) as AppConfig;

function loggerAt(logLevel: string) {
  const { stream, lines } = capture();
  const { hooks, level } = pinoOptions(config(logLevel));
  return { logger: pino({ hooks, level }, stream), lines };
}

describe('log lines', () => {
  it('logs the route table and module inventory of a start at debug, not info', () => {
    const { logger, lines } = loggerAt('info');
    logger.info({ context: 'RoutesResolver' }, 'AuditController {/api/v1/audit-logs}:');
    logger.info({ context: 'RouterExplorer' }, 'Mapped {/api/v1/audit-logs, GET} route');
    logger.info({ context: 'InstanceLoader' }, 'AppModule dependencies initialized');
    logger.info({ context: 'NestApplication' }, 'Nest application successfully started');
    expect(lines.map((l) => l.msg)).toEqual(['Nest application successfully started']);
  });

  it('shows the route table with LOG_LEVEL=debug', () => {
    const { logger, lines } = loggerAt('debug');
    logger.info({ context: 'RouterExplorer' }, 'Mapped {/api/v1/audit-logs, GET} route');
    expect(lines).toEqual([expect.objectContaining({ level: 20, context: 'RouterExplorer', msg: 'Mapped {/api/v1/audit-logs, GET} route' })]);
  });

  it('marks a line written while a request is served with its request id, and a line outside one with none', () => {
    const { stream, lines } = capture();
    const logger = pino(pinoOptions(config('info')), stream);
    const req = { id: 'req-42', ip: '127.0.0.1' } as unknown as Parameters<typeof requestContextMiddleware>[0];
    requestContextMiddleware(req, {} as Parameters<typeof requestContextMiddleware>[1], () => logger.warn({ context: 'AuditService' }, 'inside'));
    logger.warn('outside');
    expect(lines).toEqual([expect.objectContaining({ msg: 'inside', reqId: 'req-42' }), expect.not.objectContaining({ reqId: expect.anything() })]);
  });

  it('keeps warnings and errors of the same contexts at their level', () => {
    const { logger, lines } = loggerAt('info');
    logger.warn({ context: 'RouterExplorer' }, 'something odd');
    logger.error({ context: 'InstanceLoader' }, 'something wrong');
    expect(lines.map((l) => l.level)).toEqual([40, 50]);
  });

  describe('a request line', () => {
    let server: Server;
    let lines: Record<string, unknown>[];

    beforeAll(async () => {
      const captured = capture();
      lines = captured.lines;
      const log = requestLogger(pino(pinoOptions(config('info')), captured.stream), config('info'));
      server = createServer((req, res) => {
        requestId(req, res);
        log(req, res, () => undefined);
        res.setHeader('set-cookie', 'rmm_refresh=secret-refresh-token; HttpOnly');
        res.setHeader('content-security-policy', "default-src 'self'");
        res.statusCode = 201;
        res.end('{}');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('records the method, the path without its query, the status and the request id, and no header', async () => {
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve, reject) => {
        const req = request({ port, host: '127.0.0.1', path: '/api/v1/things?token=abc', method: 'POST', headers: { authorization: 'Bearer sk_secret', 'x-request-id': 'req-1' } }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end();
      });
      await new Promise((r) => setImmediate(r));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ msg: 'request completed', req: { id: 'req-1', method: 'POST', url: '/api/v1/things' }, res: { statusCode: 201 } });
      expect(Object.keys(lines[0].req as object).sort()).toEqual(['id', 'method', 'url']);
      expect(lines[0].res).toEqual({ statusCode: 201 });
      expect(JSON.stringify(lines[0])).not.toMatch(/secret|abc|content-security-policy/);
    });
  });
});

describe('the request line', () => {
  async function serve(logLevel: string, paths: string[]): Promise<Record<string, unknown>[]> {
    const { stream, lines } = capture();
    const log = requestLogger(pino(pinoOptions(config(logLevel)), stream), config(logLevel));
    const server = createServer((req, res) => {
      requestId(req, res);
      log(req, res, () => undefined);
      res.statusCode = req.url === '/fail' ? 503 : 200;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    for (const path of paths) {
      await new Promise<void>((resolve, reject) => {
        const req = request({ port, host: '127.0.0.1', path, headers: { 'x-request-id': `id${path.replace('/', '-')}` } }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end();
      });
    }
    await new Promise((r) => setImmediate(r));
    await new Promise<void>((r) => server.close(() => r()));
    return lines;
  }

  it('is written at info, a 5xx as `request errored`, with its request id and status', async () => {
    expect(await serve('info', ['/ok', '/fail'])).toEqual([
      expect.objectContaining({ level: 30, msg: 'request completed', req: { id: 'id-ok', method: 'GET', url: '/ok' }, res: { statusCode: 200 } }),
      expect.objectContaining({ level: 30, msg: 'request errored', req: { id: 'id-fail', method: 'GET', url: '/fail' }, res: { statusCode: 503 } }),
    ]);
  });

  it('is not written at LOG_LEVEL=warn, a 5xx included', async () => {
    expect(await serve('warn', ['/ok', '/fail'])).toEqual([]);
  });
});

describe('trace ids in log lines', () => {
  afterEach(() => stopTracing(0));

  it('marks a line written while a span is active with its trace and span ids, beside the request id', () => {
    const { stream, lines } = capture();
    const logger = pino(pinoOptions(config('info')), stream);
    let active: { trace_id: string; span_id: string } | undefined;
    installTracing({ activeIds: () => active, shutdown: () => Promise.resolve() });
    const req = { id: 'req-7', ip: '127.0.0.1' } as unknown as Parameters<typeof requestContextMiddleware>[0];
    active = { trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' };
    requestContextMiddleware(req, {} as Parameters<typeof requestContextMiddleware>[1], () => logger.info('in a traced request'));
    logger.info('in a span, outside any request');
    active = undefined;
    logger.info('outside any span');
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'in a traced request', reqId: 'req-7', trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' }),
      expect.objectContaining({ msg: 'in a span, outside any request', trace_id: '0af7651916cd43dd8448eb211c80319c' }),
      expect.not.objectContaining({ trace_id: expect.anything() }),
    ]);
  });

  it('writes no trace ids while tracing is off, nor after it has stopped', async () => {
    const { stream, lines } = capture();
    const logger = pino(pinoOptions(config('info')), stream);
    logger.info('off');
    installTracing({ activeIds: () => ({ trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' }), shutdown: () => Promise.resolve() });
    await stopTracing(0);
    logger.info('stopped');
    expect(lines.map((l) => 'trace_id' in l)).toEqual([false, false]);
  });
});

describe('log format', () => {
  it('is readable in development on a terminal, NODE_ENV unset included', () => {
    expect(logFormat('development', true)).toBe('pretty');
    const unset = loadConfig({ SECRET_ENCRYPTION_KEY: 'k'.repeat(32), JWT_SECRET: 'j'.repeat(32) });
    expect(logFormat(unset.nodeEnv, true)).toBe('pretty');
  });

  it('is JSON when standard output is not a terminal, even in development', () => {
    expect(logFormat('development', false)).toBe('json');
  });

  it('is JSON in production and in tests, even on a terminal', () => {
    expect(logFormat('production', true)).toBe('json');
    expect(logFormat('test', true)).toBe('json');
  });

  it('writes a pretty line per entry: time, level, context and message, then the other fields, on one line', () => {
    const written: string[] = [];
    const out = prettyOutput((text) => written.push(text))!;
    const logger = pino({ ...pinoOptions(config('info')), base: { pid: 1, hostname: 'h' } }, out);
    logger.info({ context: 'Shutdown', reqId: 'req-9' }, 'SIGTERM: draining');
    expect(written).toHaveLength(1);
    const line = written[0].replace(/\x1b\[[0-9;]*m/g, '');
    expect(line).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: \[Shutdown\] SIGTERM: draining \{"reqId":"req-9"\}\n$/);
    expect(() => JSON.parse(written[0])).toThrow();
  });
});
