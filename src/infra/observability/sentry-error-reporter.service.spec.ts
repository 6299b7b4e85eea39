import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Logger } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { ErrorReporter, type ErrorEvent } from './error-reporter.service';
import { parseSentryDsn, SentryErrorReporterService } from './sentry-error-reporter.service';

class RecordingReporter extends ErrorReporter {
  readonly events: ErrorEvent[] = [];
  async report(event: ErrorEvent): Promise<void> {
    this.events.push(event);
  }
}

const EVENT: ErrorEvent = {
  tag: 'pam_rule_risk_tier_unreachable',
  level: 'warning',
  message: 'rule can no longer match',
  context: { ruleId: 'r-1', orgId: 'o-1', validTiers: [3, 4] },
};

describe('parseSentryDsn', () => {
  it('derives the store endpoint and the public key', () => {
    const target = parseSentryDsn('https://abc123@o1.ingest.example.com/42');
    expect(target?.storeUrl.toString()).toBe('https://o1.ingest.example.com/api/42/store/');
    expect(target?.publicKey).toBe('abc123');
  });

  it('keeps a path prefix and a port', () => {
    expect(parseSentryDsn('http://key@127.0.0.1:9000/sentry/7')?.storeUrl.toString()).toBe('http://127.0.0.1:9000/sentry/api/7/store/');
  });

  it.each(['not a url', 'https://o1.example.com/42', 'ftp://k@host/1', 'https://k@host/', 'https://k@host/project'])('rejects %s', (dsn) => {
    expect(parseSentryDsn(dsn)).toBeNull();
  });
});

describe('SentryErrorReporterService', () => {
  let server: Server;
  let received: { req: IncomingMessage; body: string }[];
  let status: number;
  let port: number;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ req, body });
        res.statusCode = status;
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received = [];
    status = 200;
  });

  it('posts the event with its tag and the auth header, and keeps a copy in the fallback', async () => {
    const fallback = new RecordingReporter();
    const reporter = new SentryErrorReporterService(parseSentryDsn(`http://pubkey@127.0.0.1:${port}/5`)!, fallback, 'test');
    await reporter.report(EVENT);
    expect(received).toHaveLength(1);
    expect(received[0].req.url).toBe('/api/5/store/');
    expect(received[0].req.headers['x-sentry-auth']).toContain('sentry_key=pubkey');
    const sent = JSON.parse(received[0].body);
    expect(sent).toMatchObject({ level: 'warning', tags: { tag: 'pam_rule_risk_tier_unreachable' }, message: { formatted: 'rule can no longer match' } });
    expect(sent.event_id).toMatch(/^[0-9a-f]{32}$/);
    expect(fallback.events).toEqual([EVENT]);
  });

  it('never throws when the collector refuses or is unreachable, and logs that it could not deliver', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    status = 500;
    const fallback = new RecordingReporter();
    await expect(new SentryErrorReporterService(parseSentryDsn(`http://k@127.0.0.1:${port}/5`)!, fallback, 'test').report(EVENT)).resolves.toBeUndefined();
    const closed = new SentryErrorReporterService(parseSentryDsn('http://k@127.0.0.1:1/5')!, fallback, 'test');
    await expect(closed.report(EVENT)).resolves.toBeUndefined();
    expect(fallback.events).toHaveLength(2);
    expect(warn).toHaveBeenCalledTimes(2);
    warn.mockRestore();
  });
});
