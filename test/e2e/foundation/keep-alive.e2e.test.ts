import { request as httpRequest } from 'node:http';
import { KEEP_ALIVE_TIMEOUT_MS } from '../../../src/app.setup';
import { startTestApp, TestApp } from '../../support/test-app';

/**
 * Idle keep-alive connections outlive the idle timeout of the balancers and clients in front of the
 * service, so the side that closes an idle connection is theirs: a request sent on a connection the
 * server had just closed would fail with a reset (a 502 behind a balancer).
 */
describe('keep-alive connections', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({}, { listen: true });
  });
  afterAll(() => t.close());

  it('tells clients an idle connection is kept 65 s, longer than the 60 s idle timeout of common load balancers', async () => {
    const header = await new Promise<string | undefined>((resolve, reject) => {
      const req = httpRequest(`${t.baseUrl}/api/v1/health`, { headers: { connection: 'keep-alive' }, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers['keep-alive'] as string | undefined));
      });
      req.on('error', reject);
      req.end();
    });
    expect(header).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(60_000);
  });
});
