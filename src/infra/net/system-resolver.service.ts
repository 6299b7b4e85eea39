import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { HostResolver, ResolvedAddress, TxtResolver } from './resolver.types';

export interface SystemResolverOptions {
  /** `host:port` DNS servers (IPv6 as `[addr]:port`); the system's resolvers when empty. */
  servers?: string[];
  /** Per-query timeout; each query is tried once. */
  timeoutMs?: number;
}

/** Record-type answers that only mean "no such data", as opposed to a failed lookup. */
const NO_DATA_CODES = new Set(['ENODATA', 'ENOTFOUND']);

/**
 * Resolves through DNS directly (c-ares), not getaddrinfo: the answer is exactly what
 * the configured servers say, without /etc/hosts or nsswitch, and the timeout holds.
 */
export class SystemResolverService implements HostResolver, TxtResolver {
  private readonly resolver: Resolver;

  constructor(options: SystemResolverOptions = {}) {
    this.resolver = new Resolver({ timeout: options.timeoutMs ?? 5000, tries: 1 });
    if (options.servers && options.servers.length > 0) {
      this.resolver.setServers(options.servers);
    }
  }

  async resolve(host: string): Promise<ResolvedAddress[]> {
    const literal = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    const family = isIP(literal);
    if (family === 4 || family === 6) return [{ address: literal, family }];

    // RFC 6761 §6.3: localhost names are loopback by definition, and DNS servers
    // commonly do not answer for them.
    const name = host.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) {
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    }

    const [v4, v6] = await Promise.all([
      this.resolveFamily(() => this.resolver.resolve4(host)),
      this.resolveFamily(() => this.resolver.resolve6(host)),
    ]);
    const addresses: ResolvedAddress[] = [
      ...v4.map((address) => ({ address, family: 4 as const })),
      ...v6.map((address) => ({ address, family: 6 as const })),
    ];
    if (addresses.length === 0) {
      throw Object.assign(new Error(`No A or AAAA records for ${host}`), { code: 'ENOTFOUND' });
    }
    return addresses;
  }

  resolveTxt(name: string): Promise<string[][]> {
    return this.resolver.resolveTxt(name);
  }

  /** Abandons every query in flight (they reject with ECANCELLED), e.g. at shutdown. */
  cancel(): void {
    this.resolver.cancel();
  }

  /**
   * A missing record type is an empty answer; any other failure (timeout, SERVFAIL,
   * refused) fails the whole resolution so that a half-answered name is never used.
   */
  private async resolveFamily(query: () => Promise<string[]>): Promise<string[]> {
    try {
      return await query();
    } catch (error) {
      if (NO_DATA_CODES.has(error?.code)) return [];
      throw error;
    }
  }
}

/**
 * Parses the DNS_SERVERS setting: comma-separated `host:port` entries whose host is an
 * IP address (`[v6]:port` for IPv6). Throws a message naming the bad entry.
 */
export function parseDnsServers(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  return value.split(',').map((raw) => {
    const entry = raw.trim();
    const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(entry);
    const host = match?.[1] ?? match?.[2];
    const port = Number(match?.[3]);
    const hostFamily = host ? isIP(host) : 0;
    const bracketsMatchFamily = match?.[1] !== undefined ? hostFamily === 6 : hostFamily === 4;
    if (!match || !bracketsMatchFamily || port < 1 || port > 65535) {
      throw new Error(`DNS_SERVERS entry "${entry}" must be <ipv4>:<port> or [<ipv6>]:<port>`);
    }
    return entry;
  });
}
