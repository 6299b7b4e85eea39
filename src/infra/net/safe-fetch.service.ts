import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { isLoopbackAddress, isPublicAddress } from './ip-policy.util';
import { SafeFetchError } from './net.errors';
import { HostResolver, ResolvedAddress } from './resolver.types';

export interface SafeHttpClientOptions {
  resolver: HostResolver;
  /**
   * Development and test only: lets http://127.0.0.1, http://[::1] and http://localhost
   * through, for an IdP running on the same machine. Nothing else becomes reachable.
   */
  allowInsecureLoopback?: boolean;
  /** Whole-call budget: DNS, connect, TLS, headers and body. */
  timeoutMs?: number;
  /** Cap on response body bytes actually read. */
  maxBytes?: number;
  userAgent?: string;
  /** PEM certificates trusted in addition to Node's bundled roots (an IdP behind a private CA). */
  extraCaCertificates?: string[];
  /**
   * Which resolved addresses may be connected to; `isPublicAddress` unless replaced.
   * Tests replace it to reach HTTPS servers on loopback.
   */
  isAllowedAddress?: (address: string) => boolean;
  /** Connections open at once to one checked address (default 16, an IdP's share). */
  maxSocketsPerHost?: number;
}

/** A URL that passed every check, with the one address the connection will use. */
export interface ResolvedTarget {
  url: URL;
  /** The URL's host name, IPv6 literals without brackets. */
  hostname: string;
  port: number;
  address: string;
  family: 4 | 6;
}

export interface SafeRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  /** A URLSearchParams body is sent as application/x-www-form-urlencoded unless a content-type is given. */
  body?: string | Buffer | URLSearchParams;
  maxBytes?: number;
  timeoutMs?: number;
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

/** Hosts whose connections are kept open between calls (an IdP's token, UserInfo and JWKS endpoints share one). */
const POOLED_HOSTS = 256;
/**
 * How long an idle kept-alive connection to an IdP stays open: under the 5 s that Node.js servers
 * (and most load balancers, at 60 s) keep an idle connection, so a call never goes out on a
 * connection the server is closing.
 */
const IDLE_SOCKET_MS = 4_000;

/**
 * HTTP client for tenant-supplied URLs (OIDC discovery, token and UserInfo calls, SAML
 * metadata). Each call resolves the host once, refuses it unless every address is
 * public, then connects to the checked address itself, so a DNS answer that changes
 * between check and connect (rebinding) is never used. Redirects are never followed.
 */
export class SafeFetchService {
  private readonly resolver: HostResolver;
  private readonly allowInsecureLoopback: boolean;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly userAgent: string;
  private readonly ca: string[] | undefined;
  private readonly isAllowedAddress: (address: string) => boolean;
  private readonly maxSockets: number;
  private readonly maxFreeSockets: number;
  /**
   * Kept-alive connections, one agent per (scheme, host name, checked address, port): a sign-in's
   * token and UserInfo calls reuse the TCP and TLS connection of the previous sign-in instead of
   * a handshake each. A connection is reused only for the address it was opened to and only when
   * this call's own resolution checked that same address, so pooling never bypasses the check.
   */
  private readonly agents = new LRUCache<string, http.Agent>({ max: POOLED_HOSTS, dispose: (agent) => agent.destroy() });

  constructor(options: SafeHttpClientOptions) {
    this.resolver = options.resolver;
    this.allowInsecureLoopback = options.allowInsecureLoopback ?? false;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.maxBytes = options.maxBytes ?? 512 * 1024;
    this.userAgent = options.userAgent ?? 'rmm-identity-sso';
    // Node's `ca` option replaces the bundled roots rather than adding to them.
    this.ca = options.extraCaCertificates?.length
      ? [...rootCertificates, ...options.extraCaCertificates]
      : undefined;
    this.isAllowedAddress = options.isAllowedAddress ?? isPublicAddress;
    this.maxSockets = options.maxSocketsPerHost ?? 16;
    this.maxFreeSockets = options.maxSocketsPerHost ? Math.min(options.maxSocketsPerHost, 64) : 4;
  }

  /** Checks scheme, credentials and every resolved address; returns the address to connect to. */
  async assertSafeUrl(url: string): Promise<ResolvedTarget> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new SafeFetchError('invalid_url', 'The URL is not valid');
    }
    if (parsed.username !== '' || parsed.password !== '') {
      throw new SafeFetchError('invalid_url', 'The URL must not contain credentials');
    }
    const hostname = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    const insecureLoopback =
      parsed.protocol === 'http:' && this.allowInsecureLoopback && LOOPBACK_HOSTS.has(hostname);
    if (parsed.protocol !== 'https:' && !insecureLoopback) {
      throw new SafeFetchError('insecure_scheme', 'Only https URLs are allowed');
    }

    const addresses = await this.resolveHost(hostname);
    const allowed = insecureLoopback ? isLoopbackAddress : this.isAllowedAddress;
    if (!addresses.every(({ address }) => allowed(address))) {
      throw new SafeFetchError('private_address', `${hostname} resolves to a private or reserved address`);
    }

    const [chosen] = addresses;
    const port = parsed.port !== '' ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
    return { url: parsed, hostname, port, address: chosen.address, family: chosen.family };
  }

  /**
   * One HTTP exchange with no redirect following: any non-3xx status is returned as is
   * (a token endpoint's 400 carries a JSON error the caller needs), a 3xx is an error.
   */
  async request(url: string, options: SafeRequestOptions = {}): Promise<SafeResponse> {
    const deadline = Date.now() + (options.timeoutMs ?? this.timeoutMs);
    const target = await beforeDeadline(this.assertSafeUrl(url), deadline);
    return this.exchange(target, options, options.maxBytes ?? this.maxBytes, deadline);
  }

  /** GET (unless told otherwise) expecting a 2xx; the body decoded as UTF-8. */
  async fetchText(url: string, options: SafeRequestOptions = {}): Promise<string> {
    const response = await this.request(url, options);
    if (response.status < 200 || response.status > 299) {
      throw new SafeFetchError('http_status', `The server answered with HTTP ${response.status}`, {
        status: response.status,
      });
    }
    return response.body.toString('utf8');
  }

  /** Like `fetchText`, parsed as JSON. The result is unvalidated input. */
  async fetchJson(url: string, options: SafeRequestOptions = {}): Promise<unknown> {
    const text = await this.fetchText(url, {
      ...options,
      headers: { accept: 'application/json', ...options.headers },
    });
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new SafeFetchError('invalid_json', 'The server did not answer with valid JSON', { cause: error });
    }
  }

  private async resolveHost(hostname: string): Promise<ResolvedAddress[]> {
    const family = isIP(hostname);
    if (family === 4 || family === 6) return [{ address: hostname, family }];
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolver.resolve(hostname);
    } catch (error) {
      throw new SafeFetchError('dns_failure', `Could not resolve ${hostname}`, { cause: error });
    }
    if (addresses.length === 0) throw new SafeFetchError('dns_failure', `Could not resolve ${hostname}`);
    return addresses;
  }

  /** Closes every kept-alive connection (shutdown, tests). */
  close(): void {
    this.agents.clear();
  }

  /** The keep-alive agent whose connections all go to the target's checked address. */
  private agentFor(target: ResolvedTarget): http.Agent {
    const key = `${target.url.protocol}//${target.hostname}|${target.address}|${target.port}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const { address, family } = target;
      const pinnedLookup: LookupFunction = (_name, lookupOptions, callback) => {
        if (lookupOptions.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      };
      const options = { keepAlive: true, timeout: IDLE_SOCKET_MS, maxSockets: this.maxSockets, maxFreeSockets: this.maxFreeSockets, lookup: pinnedLookup };
      agent = target.url.protocol === 'https:' ? new https.Agent({ ...options, ...(this.ca ? { ca: this.ca } : {}) }) : new http.Agent(options);
      this.agents.set(key, agent);
    }
    return agent;
  }

  private exchange(
    target: ResolvedTarget,
    options: SafeRequestOptions,
    maxBytes: number,
    deadline: number,
  ): Promise<SafeResponse> {
    const headers: Record<string, string> = { 'user-agent': this.userAgent, accept: '*/*' };
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      // Host always names the URL's host, the one the address was checked for.
      if (name.toLowerCase() !== 'host') headers[name.toLowerCase()] = value;
    }
    let body: Buffer | undefined;
    if (options.body instanceof URLSearchParams) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = Buffer.from(options.body.toString(), 'utf8');
    } else if (options.body !== undefined) {
      body = Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, 'utf8');
    }
    if (body) headers['content-length'] = String(body.length);

    const { hostname, url } = target;
    const requestOptions: https.RequestOptions = {
      host: hostname,
      port: target.port,
      path: `${url.pathname}${url.search}`,
      method: options.method ?? 'GET',
      headers,
      agent: this.agentFor(target),
    };
    const transport = url.protocol === 'https:' ? https : http;
    if (url.protocol === 'https:') {
      // SNI and certificate verification use the real host name, not the pinned address.
      if (!isIP(hostname)) requestOptions.servername = hostname;
      if (this.ca) requestOptions.ca = this.ca;
    }

    return new Promise<SafeResponse>((resolve, reject) => {
      let settled = false;
      const settle = (error: SafeFetchError | null, response?: SafeResponse): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) {
          req.destroy();
          reject(error);
        } else if (response) {
          resolve(response);
        }
      };
      const tooLarge = () => new SafeFetchError('too_large', `The response from ${hostname} exceeds ${maxBytes} bytes`);

      const req = transport.request(requestOptions, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status <= 399) {
          settle(
            new SafeFetchError('redirect', `${hostname} answered with a redirect (HTTP ${status}), which is not followed`, {
              status,
            }),
          );
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          settle(tooLarge());
          return;
        }
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) settle(tooLarge());
          else chunks.push(chunk);
        });
        res.on('end', () => settle(null, { status, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (error) => settle(networkError(hostname, error)));
        res.on('close', () => {
          if (!res.complete) settle(networkError(hostname, new Error('connection closed mid-response')));
        });
      });
      req.on('error', (error) => settle(networkError(hostname, error)));
      const timer = setTimeout(
        () => settle(new SafeFetchError('timeout', `${hostname} did not answer in time`)),
        Math.max(0, deadline - Date.now()),
      );
      req.end(body);
    });
  }
}

function networkError(hostname: string, error: Error & { code?: unknown }): SafeFetchError {
  const code = typeof error.code === 'string' && /^[A-Z0-9_]+$/.test(error.code) ? ` (${error.code})` : '';
  return new SafeFetchError('network', `Could not complete the request to ${hostname}${code}`, { cause: error });
}

function beforeDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SafeFetchError('timeout', 'Resolving the host did not finish in time')),
      Math.max(0, deadline - Date.now()),
    );
  });
  return Promise.race([work, expiry]).finally(() => clearTimeout(timer));
}
