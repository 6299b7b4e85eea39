/**
 * A plain HTTP proxy in front of one server (the test OpenID Provider) that holds the requests a
 * test picks until it releases them: a request of the service to the identity provider stays in
 * flight exactly as long as the test needs, whatever the machine's speed.
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HoldingProxy {
  /** `http://127.0.0.1:<port>`: the target's paths under it. */
  url: string;
  /** Resolves when the first held request has arrived (its body read by the proxy, not yet forwarded). */
  held: Promise<void>;
  /** Forwards the held requests, and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

export async function holdingProxy(target: string, hold: (req: IncomingMessage) => boolean): Promise<HoldingProxy> {
  const upstream = new URL(target);
  let arrived!: () => void;
  const held = new Promise<void>((resolve) => (arrived = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (hold(req)) {
        arrived();
        await released;
      }
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      out.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    release,
    close: () => {
      release();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
