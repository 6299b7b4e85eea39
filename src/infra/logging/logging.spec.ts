import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { AppConfig } from '../config/app-config';
import { requestContextMiddleware } from '../context/request-context';
import { pinoOptions, requestId, requestLogger } from './logging';

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
