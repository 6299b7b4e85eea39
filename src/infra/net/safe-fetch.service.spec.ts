import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { ScriptedResolver } from '../../../test/support/dns/scripted-resolver';
import { TestDnsServer } from '../../../test/support/dns/test-dns-server';
import { SafeFetchError } from './net.errors';
import { HostResolver } from './resolver.types';
import { SafeFetchService, SafeHttpClientOptions } from './safe-fetch.service';
import { SystemResolverService } from './system-resolver.service';

interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  servername?: string;
}

interface LocalServer {
  port: number;
  requests: SeenRequest[];
  connections: number;
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function listen(server: http.Server, requests: SeenRequest[], handler: Handler): Promise<LocalServer> {
  const state = { connections: 0 };
  server.on('connection', () => state.connections++);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const socket = req.socket as TLSSocket;
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        servername: socket.encrypted && socket.servername ? socket.servername : undefined,
      });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function startHttp(handler: Handler): Promise<LocalServer> {
  return listen(http.createServer(), [], handler);
}

function startHttps(tls: { key: string; cert: string }, handler: Handler): Promise<LocalServer> {
  return listen(https.createServer(tls), [], handler);
}

/** Node cannot write X.509 certificates and no certificate package is installed, so the openssl CLI makes one. */
function selfSignedCertificate(hostname: string): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'safe-fetch-tls-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', keyPath, '-out', certPath, '-days', '1',
        '-subj', `/CN=${hostname}`, '-addext', `subjectAltName=DNS:${hostname}`,
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function failure(promise: Promise<unknown>): Promise<SafeFetchError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SafeFetchError);
    return error as SafeFetchError;
  }
  throw new Error('expected the call to fail');
}

const PUBLIC_IP = '93.184.216.34';

describe('SafeFetchService.assertSafeUrl', () => {
  const client = (resolver: HostResolver, extra: Partial<SafeHttpClientOptions> = {}) =>
    new SafeFetchService({ resolver, ...extra });

  it('accepts an https URL whose host resolves to public addresses and returns the first one', async () => {
    const resolver = new ScriptedResolver().answer('idp.example.com', [PUBLIC_IP, '2606:2800:220:1::1']);

    const target = await client(resolver).assertSafeUrl('https://IDP.example.com/.well-known/openid-configuration');

    expect(target).toMatchObject({ hostname: 'idp.example.com', port: 443, address: PUBLIC_IP, family: 4 });
    expect(resolver.calls).toEqual(['idp.example.com']);
  });

  it('keeps an explicit non-default port', async () => {
    const resolver = new ScriptedResolver().answer('idp.example.com', [PUBLIC_IP]);

    await expect(client(resolver).assertSafeUrl('https://idp.example.com:8443/x')).resolves.toMatchObject({ port: 8443 });
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private 10/8'],
    ['169.254.169.254', 'cloud metadata'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['172.16.5.4', 'private 172.16/12'],
    ['192.168.0.10', 'private 192.168/16'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fd00::1', 'unique-local fd00::/8'],
    ['fe80::1', 'IPv6 link-local'],
    ['ff02::1', 'IPv6 multicast'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:a00:1', 'IPv4-mapped private, hex'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ])('refuses a host name that resolves to %s (%s)', async (address) => {
    const resolver = new ScriptedResolver().answer('idp.example.com', [address]);

    const error = await failure(client(resolver).assertSafeUrl('https://idp.example.com/'));

    expect(error.reason).toBe('private_address');
    expect(error.message).not.toContain(address);
  });

  it('refuses a host name when any one of its addresses is private', async () => {
    const resolver = new ScriptedResolver().answer('idp.example.com', [PUBLIC_IP, '2606:4700::1', '10.0.0.1']);

    expect((await failure(client(resolver).assertSafeUrl('https://idp.example.com/'))).reason).toBe('private_address');
  });

  it.each([
    ['https://10.0.0.1/'],
    ['https://127.0.0.1:8443/'],
    ['https://[::1]/'],
    ['https://[fd00::1]/'],
    ['https://[::ffff:10.0.0.1]/'],
    ['https://[::ffff:0a00:0001]/'],
    ['https://0x7f.1/'],
    ['https://2130706433/'],
  ])('refuses the private IP literal in %s without a DNS lookup', async (url) => {
    const resolver = new ScriptedResolver();

    expect((await failure(client(resolver).assertSafeUrl(url))).reason).toBe('private_address');
    expect(resolver.calls).toEqual([]);
  });

  it('accepts a public IP literal without a DNS lookup', async () => {
    const resolver = new ScriptedResolver();

    await expect(client(resolver).assertSafeUrl(`https://${PUBLIC_IP}/`)).resolves.toMatchObject({ address: PUBLIC_IP });
    expect(resolver.calls).toEqual([]);
  });

  it.each([['http://idp.example.com/'], ['http://93.184.216.34/'], ['ftp://idp.example.com/'], ['file:///etc/passwd']])(
    'refuses the non-https URL %s before resolving it',
    async (url) => {
      const resolver = new ScriptedResolver().answer('idp.example.com', [PUBLIC_IP]);

      expect((await failure(client(resolver).assertSafeUrl(url))).reason).toBe('insecure_scheme');
      expect(resolver.calls).toEqual([]);
    },
  );

  it.each([['not a url'], [''], ['https://'], ['//idp.example.com/']])('refuses the malformed URL %p', async (url) => {
    expect((await failure(client(new ScriptedResolver()).assertSafeUrl(url))).reason).toBe('invalid_url');
  });

  it.each([['https://user@idp.example.com/'], ['https://user:pass@idp.example.com/'], ['https://:pass@idp.example.com/']])(
    'refuses credentials in %s',
    async (url) => {
      const resolver = new ScriptedResolver().answer('idp.example.com', [PUBLIC_IP]);

      const error = await failure(client(resolver).assertSafeUrl(url));

      expect(error.reason).toBe('invalid_url');
      expect(error.message).not.toContain('pass');
    },
  );

  it('reports a name that does not resolve as a DNS failure', async () => {
    expect((await failure(client(new ScriptedResolver()).assertSafeUrl('https://nowhere.example.com/'))).reason).toBe(
      'dns_failure',
    );
  });

  it('reports an empty DNS answer as a DNS failure', async () => {
    const resolver = new ScriptedResolver().answer('empty.example.com', []);

    expect((await failure(client(resolver).assertSafeUrl('https://empty.example.com/'))).reason).toBe('dns_failure');
  });

  describe('with allowInsecureLoopback', () => {
    const resolver = new ScriptedResolver()
      .answer('localhost', ['127.0.0.1', '::1'])
      .answer('idp.example.com', ['127.0.0.1']);
    const dev = client(resolver, { allowInsecureLoopback: true });

    it.each([['http://127.0.0.1:8080/'], ['http://[::1]:8080/'], ['http://localhost:8080/'], ['http://LOCALHOST/']])(
      'accepts the loopback issuer %s over plain http',
      async (url) => {
        const target = await dev.assertSafeUrl(url);

        expect(['127.0.0.1', '::1']).toContain(target.address);
      },
    );

    it('still refuses localhost when it resolves to something other than loopback', async () => {
      const rebound = new ScriptedResolver().answer('localhost', ['10.0.0.1']);

      const error = await failure(client(rebound, { allowInsecureLoopback: true }).assertSafeUrl('http://localhost/'));

      expect(error.reason).toBe('private_address');
    });

    it.each([['http://idp.example.com/'], ['http://127.0.0.2/'], ['http://10.0.0.1/'], ['http://[::ffff:127.0.0.1]/']])(
      'still refuses plain http to %s',
      async (url) => {
        expect((await failure(dev.assertSafeUrl(url))).reason).toBe('insecure_scheme');
      },
    );

    it.each([['https://127.0.0.1/'], ['https://localhost/'], ['https://idp.example.com/']])(
      'still refuses loopback addresses over https for %s',
      async (url) => {
        expect((await failure(dev.assertSafeUrl(url))).reason).toBe('private_address');
      },
    );
  });
});

describe('SafeFetchService.assertSafeUrl with the real DNS server on loopback', () => {
  const dns = new TestDnsServer();
  let client: SafeFetchService;

  beforeAll(async () => {
    await dns.start();
    client = new SafeFetchService({ resolver: new SystemResolverService({ servers: [dns.address], timeoutMs: 1000 }) });
  });
  afterAll(async () => {
    await dns.stop();
  });

  it.each([
    ['A', '127.0.0.1'],
    ['A', '10.20.30.40'],
    ['A', '169.254.169.254'],
    ['A', '192.168.1.1'],
    ['A', '100.100.100.100'],
    ['AAAA', '::1'],
    ['AAAA', 'fd00::1234'],
    ['AAAA', 'fe80::1'],
    ['AAAA', '::ffff:10.0.0.1'],
  ])('refuses a host whose %s record is %s', async (type, address) => {
    const name = `bad-${type}-${address.replace(/[.:]/g, '-')}.example.com`;
    dns.setA(name, type === 'A' ? address : PUBLIC_IP);
    if (type === 'AAAA') dns.setAAAA(name, address);

    expect((await failure(client.assertSafeUrl(`https://${name}/`))).reason).toBe('private_address');
  });

  it('accepts a host with only public A and AAAA records', async () => {
    dns.setA('good.example.com', PUBLIC_IP).setAAAA('good.example.com', '2606:2800:220:1::1');

    await expect(client.assertSafeUrl('https://good.example.com/')).resolves.toMatchObject({ address: PUBLIC_IP });
  });

  it('reports a missing name as a DNS failure', async () => {
    expect((await failure(client.assertSafeUrl('https://missing.example.com/'))).reason).toBe('dns_failure');
  });
});

describe('SafeFetchService requests over the development loopback path', () => {
  let server: LocalServer;
  let behaviour: Handler;
  let base: string;
  const resolver = new ScriptedResolver().answer('localhost', ['127.0.0.1']);
  const client = new SafeFetchService({
    resolver,
    allowInsecureLoopback: true,
    timeoutMs: 400,
    maxBytes: 1024,
    userAgent: 'sso-test/1',
  });

  beforeAll(async () => {
    server = await startHttp((req, res) => behaviour(req, res));
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });

  it('GETs a document and returns status, headers and body', async () => {
    behaviour = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain', 'x-id': 'abc' }).end('hello');

    const response = await client.request(`${base}/doc?x=1`);

    expect(response.status).toBe(200);
    expect(response.headers['x-id']).toBe('abc');
    expect(response.body.toString()).toBe('hello');
    expect(server.requests[0]).toMatchObject({ method: 'GET', url: '/doc?x=1' });
    expect(server.requests[0].headers['user-agent']).toBe('sso-test/1');
    expect(server.requests[0].headers.host).toBe(`127.0.0.1:${server.port}`);
  });

  it('POSTs a form body with its content type and length', async () => {
    behaviour = (_req, res) => res.writeHead(200).end('{}');

    await client.request(`${base}/token`, {
      method: 'POST',
      headers: { Authorization: 'Basic abc' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'a b&c' }),
    });

    const seen = server.requests[0];
    expect(seen.method).toBe('POST');
    expect(seen.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(seen.headers.authorization).toBe('Basic abc');
    expect(seen.body).toBe('grant_type=authorization_code&code=a+b%26c');
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(seen.body)));
  });

  it('keeps the Host header on the URL host even when a caller supplies another', async () => {
    behaviour = (_req, res) => res.writeHead(204).end();

    await client.request(`${base}/`, { headers: { Host: 'internal.example' } });

    expect(server.requests[0].headers.host).toBe(`127.0.0.1:${server.port}`);
  });

  it('connects to localhost through the address it checked', async () => {
    behaviour = (_req, res) => res.writeHead(200).end('ok');

    await expect(client.fetchText(`http://localhost:${server.port}/`)).resolves.toBe('ok');
    expect(server.requests[0].headers.host).toBe(`localhost:${server.port}`);
  });

  it('returns a 4xx from request so callers can read an OAuth error body', async () => {
    behaviour = (_req, res) => res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');

    const response = await client.request(`${base}/token`, { method: 'POST', body: 'x=1' });

    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString())).toEqual({ error: 'invalid_grant' });
  });

  it('fails fetchText on a non-2xx status without repeating the body', async () => {
    behaviour = (_req, res) => res.writeHead(500).end('SECRET-INTERNAL-DETAIL');

    const error = await failure(client.fetchText(`${base}/`));

    expect(error.reason).toBe('http_status');
    expect(error.status).toBe(500);
    expect(error.message).not.toContain('SECRET');
  });

  it.each([[301], [302], [303], [307], [308]])('refuses a %i redirect and does not follow it', async (status) => {
    const elsewhere = await startHttp((_req, res) => res.writeHead(200).end('followed'));
    behaviour = (_req, res) => res.writeHead(status, { location: `http://127.0.0.1:${elsewhere.port}/` }).end();

    try {
      const error = await failure(client.request(`${base}/`));

      expect(error.reason).toBe('redirect');
      expect(error.status).toBe(status);
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('fails a response whose declared length exceeds the cap', async () => {
    behaviour = (_req, res) => res.writeHead(200, { 'content-length': '2048' }).end('x'.repeat(2048));

    expect((await failure(client.request(`${base}/`))).reason).toBe('too_large');
  });

  it('fails a streamed response once the bytes read exceed the cap', async () => {
    behaviour = (_req, res) => {
      res.writeHead(200);
      res.write('x'.repeat(700));
      setTimeout(() => res.end('y'.repeat(700)), 20);
    };

    expect((await failure(client.request(`${base}/`))).reason).toBe('too_large');
  });

  it('honours a per-call byte cap', async () => {
    behaviour = (_req, res) => res.writeHead(200).end('x'.repeat(100));

    expect((await failure(client.request(`${base}/`, { maxBytes: 99 }))).reason).toBe('too_large');
  });

  it('accepts a response of exactly the cap', async () => {
    behaviour = (_req, res) => res.writeHead(200).end('x'.repeat(1024));

    await expect(client.request(`${base}/`)).resolves.toMatchObject({ status: 200 });
  });

  it('times out when the server never answers', async () => {
    behaviour = () => undefined;
    const started = Date.now();

    expect((await failure(client.request(`${base}/`))).reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('times out when the body trickles past the total budget, though each chunk arrives quickly', async () => {
    behaviour = (_req, res) => {
      res.writeHead(200);
      const interval = setInterval(() => (res.writableEnded ? clearInterval(interval) : res.write('.')), 50);
      res.on('close', () => clearInterval(interval));
    };

    expect((await failure(client.request(`${base}/`))).reason).toBe('timeout');
  });

  it('honours a per-call timeout', async () => {
    behaviour = (_req, res) => setTimeout(() => res.writeHead(200).end('late'), 150);

    expect((await failure(client.request(`${base}/`, { timeoutMs: 50 }))).reason).toBe('timeout');
  });

  it('counts DNS resolution against the same budget', async () => {
    const hanging = new SafeFetchService({
      resolver: { resolve: () => new Promise(() => undefined) },
      allowInsecureLoopback: true,
      timeoutMs: 100,
    });

    expect((await failure(hanging.request('http://localhost/'))).reason).toBe('timeout');
  });

  it('parses JSON with fetchJson and asks for JSON', async () => {
    behaviour = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":[1,2]}');

    await expect(client.fetchJson(`${base}/`)).resolves.toEqual({ a: [1, 2] });
    expect(server.requests[0].headers.accept).toBe('application/json');
  });

  it('fails fetchJson cleanly on a body that is not JSON, without repeating it', async () => {
    behaviour = (_req, res) => res.writeHead(200).end('<html>SECRET</html>');

    const error = await failure(client.fetchJson(`${base}/`));

    expect(error.reason).toBe('invalid_json');
    expect(error.message).not.toContain('SECRET');
  });

  it('reports a refused connection as a network failure', async () => {
    const closed = await startHttp(() => undefined);
    const port = closed.port;
    await closed.close();

    expect((await failure(client.request(`http://127.0.0.1:${port}/`))).reason).toBe('network');
  });

  it('reports a connection dropped mid-response as a network failure', async () => {
    behaviour = (req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => req.socket.destroy(), 20);
    };

    expect((await failure(client.request(`${base}/`))).reason).toBe('network');
  });
});

describe('SafeFetchService requests over HTTPS', () => {
  const tls = selfSignedCertificate('idp.example.com');
  let server: LocalServer;
  let port: number;
  const onlyLoopback = (address: string) => address === '127.0.0.1';

  beforeAll(async () => {
    server = await startHttps(tls, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    port = server.port;
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });

  it('connects to the checked address and verifies the certificate against the real host name', async () => {
    const resolver = new ScriptedResolver().answer('idp.example.com', ['127.0.0.1']);
    const client = new SafeFetchService({ resolver, extraCaCertificates: [tls.cert], isAllowedAddress: onlyLoopback });

    await expect(client.fetchJson(`https://idp.example.com:${port}/doc`)).resolves.toEqual({ ok: true });
    expect(server.requests[0].servername).toBe('idp.example.com');
    expect(server.requests[0].headers.host).toBe(`idp.example.com:${port}`);
  });

  it('never looks the name up a second time, so a changed answer cannot redirect the connection', async () => {
    const resolver = new ScriptedResolver().answer('idp.example.com', ['127.0.0.1'], ['192.0.2.1']);
    const client = new SafeFetchService({ resolver, extraCaCertificates: [tls.cert], isAllowedAddress: onlyLoopback });

    await expect(client.fetchJson(`https://idp.example.com:${port}/doc`)).resolves.toEqual({ ok: true });
    expect(resolver.calls).toEqual(['idp.example.com']);
    expect(server.requests).toHaveLength(1);
  });

  it('reuses one kept-alive TLS connection for calls that resolve to the same checked address', async () => {
    const resolver = new ScriptedResolver().answer('idp.example.com', ['127.0.0.1'], ['127.0.0.1'], ['127.0.0.1']);
    const client = new SafeFetchService({ resolver, extraCaCertificates: [tls.cert], isAllowedAddress: onlyLoopback });
    const before = server.connections;
    for (let i = 0; i < 3; i++) await expect(client.fetchJson(`https://idp.example.com:${port}/doc`)).resolves.toEqual({ ok: true });
    expect(server.connections - before).toBe(1);
    expect(resolver.calls).toEqual(['idp.example.com', 'idp.example.com', 'idp.example.com']);
    client.close();
  });

  it('checks every call again, so a kept-alive connection never carries a call whose new answer is refused', async () => {
    const resolver = new ScriptedResolver().answer('idp.example.com', ['127.0.0.1'], ['10.0.0.1']);
    const client = new SafeFetchService({ resolver, extraCaCertificates: [tls.cert], isAllowedAddress: onlyLoopback });
    await expect(client.fetchJson(`https://idp.example.com:${port}/doc`)).resolves.toEqual({ ok: true });
    const served = server.requests.length;
    expect((await failure(client.fetchJson(`https://idp.example.com:${port}/doc`))).reason).toBe('private_address');
    expect(server.requests).toHaveLength(served);
    client.close();
  });

  it('refuses the private address before opening any connection', async () => {
    const resolver = new ScriptedResolver().answer('idp.example.com', ['127.0.0.1']);
    const client = new SafeFetchService({ resolver, extraCaCertificates: [tls.cert] });
    const connectionsBefore = server.connections;

    expect((await failure(client.fetchJson(`https://idp.example.com:${port}/doc`))).reason).toBe('private_address');
    expect(server.connections).toBe(connectionsBefore);
  });

  it('fails when the certificate does not name the URL host, though the address is the same', async () => {
    const resolver = new ScriptedResolver().answer('other.example.com', ['127.0.0.1']);
    const client = new SafeFetchService({ resolver, extraCaCertificates: [tls.cert], isAllowedAddress: onlyLoopback });

    const error = await failure(client.fetchJson(`https://other.example.com:${port}/doc`));

    expect(error.reason).toBe('network');
    expect(error.message).toContain('ERR_TLS_CERT_ALTNAME_INVALID');
    expect(server.requests).toHaveLength(0);
  });

  it('fails when the certificate is not trusted', async () => {
    const resolver = new ScriptedResolver().answer('idp.example.com', ['127.0.0.1']);
    const client = new SafeFetchService({ resolver, isAllowedAddress: onlyLoopback });

    expect((await failure(client.fetchJson(`https://idp.example.com:${port}/doc`))).reason).toBe('network');
    expect(server.requests).toHaveLength(0);
  });

  describe('with names served by the real DNS server', () => {
    const dns = new TestDnsServer();

    beforeAll(async () => {
      await dns.start();
    });
    afterAll(async () => {
      await dns.stop();
    });

    it('ignores a DNS answer that changes after the check (rebinding) and queries the name once', async () => {
      dns.setA('idp.example.com', '127.0.0.1');
      const system = new SystemResolverService({ servers: [dns.address], timeoutMs: 1000 });
      const rebinding: HostResolver = {
        resolve: async (host) => {
          const answer = await system.resolve(host);
          dns.setA('idp.example.com', '192.0.2.1');
          return answer;
        },
      };
      const client = new SafeFetchService({ resolver: rebinding, extraCaCertificates: [tls.cert], isAllowedAddress: onlyLoopback });

      await expect(client.fetchJson(`https://idp.example.com:${port}/doc`)).resolves.toEqual({ ok: true });
      expect(dns.queryCount('idp.example.com', 'A')).toBe(1);
    });
  });
});
