import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpPushGateway } from './http-push.gateway';
import type { PushMessage } from './push-gateway';

const MESSAGE: PushMessage = { platform: 'ios', token: 'secret-device-token', title: 'Approve?', body: 'notepad.exe', data: { approvalId: 'a-1' } };

describe('HttpPushGateway', () => {
  let server: Server;
  let url: string;
  let answer: (req: IncomingMessage, res: ServerResponse) => void;
  let bodies: unknown[];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        bodies.push(JSON.parse(body));
        answer(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/push`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => (bodies = []));

  it('posts the message as JSON and counts a 2xx as delivered', async () => {
    answer = (_req, res) => res.writeHead(202).end('{}');
    await expect(new HttpPushGateway(url).send(MESSAGE)).resolves.toEqual({ ok: true });
    expect(bodies).toEqual([MESSAGE]);
  });

  it.each([
    [503, true],
    [429, true],
    [408, true],
    [400, false],
    [410, false],
  ])('answers HTTP %i as a failure, retryable: %s, without the token or the body', async (status, retryable) => {
    answer = (_req, res) => res.writeHead(status).end(`{"token":"${MESSAGE.token}"}`);
    const result = await new HttpPushGateway(url).send(MESSAGE);
    expect(result).toEqual({ ok: false, retryable, error: `Push gateway answered HTTP ${status}` });
    expect(JSON.stringify(result)).not.toContain(MESSAGE.token);
  });

  it('gives up on a gateway that trickles its answer past the timeout, and says so', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    };
    const started = Date.now();
    await expect(new HttpPushGateway(url, 300).send(MESSAGE)).resolves.toEqual({ ok: false, retryable: true, error: 'Push gateway did not answer within 300 ms' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('reports a gateway that refuses connections as unreachable and retryable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(new HttpPushGateway(`http://127.0.0.1:${port}/push`).send(MESSAGE)).resolves.toEqual({
      ok: false,
      retryable: true,
      error: 'Push gateway unreachable (ECONNREFUSED)',
    });
  });
});
