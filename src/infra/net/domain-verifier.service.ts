import { randomBytes, timingSafeEqual } from 'node:crypto';
import { TxtResolver } from './resolver.types';

export type DomainCheckResult = 'verified' | 'missing' | 'error';

export interface DomainVerifierOptions {
  resolver: TxtResolver;
  /** Upper bound on one check, whatever the resolver's own timeout. */
  timeoutMs?: number;
}

const RECORD_PREFIX = '_svc-verify.';
const VALUE_PREFIX = 'svc-domain-verify=';

/** The name does not exist, or exists without TXT records. */
const ABSENT_CODES = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * Proves an organization controls a domain: it publishes a TXT record at
 * `_svc-verify.<domain>` holding `svc-domain-verify=<token>`. Domains passed in are
 * expected to be normalised already (see `normaliseDomain`).
 */
export class DomainVerifierService {
  private readonly resolver: TxtResolver;
  private readonly timeoutMs: number;

  constructor(options: DomainVerifierOptions) {
    this.resolver = options.resolver;
    this.timeoutMs = options.timeoutMs ?? 5000;
  }

  recordName(domain: string): string {
    return `${RECORD_PREFIX}${domain}`;
  }

  recordValue(token: string): string {
    return `${VALUE_PREFIX}${token}`;
  }

  newToken(): string {
    return randomBytes(32).toString('base64url');
  }

  /**
   * 'missing' when the name has no TXT record carrying the token (including no such
   * name), 'error' when DNS could not give an answer in time (timeout, SERVFAIL,
   * refused), so a caller can keep the previous state instead of revoking on a blip.
   */
  async check(domain: string, token: string): Promise<DomainCheckResult> {
    let records: string[][];
    try {
      records = await this.resolveWithin(this.recordName(domain));
    } catch (error) {
      return ABSENT_CODES.has(error?.code) ? 'missing' : 'error';
    }
    const expected = Buffer.from(this.recordValue(token), 'utf8');
    // RFC 7208 §3.3 style: a TXT record split into several character-strings is read
    // as their concatenation, which is how long values survive the 255-byte limit.
    const found = records.some((strings) => {
      const value = Buffer.from(strings.join(''), 'utf8');
      return value.length === expected.length && timingSafeEqual(value, expected);
    });
    return found ? 'verified' : 'missing';
  }

  private resolveWithin(name: string): Promise<string[][]> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error(`TXT lookup for ${name} timed out`), { code: 'ETIMEOUT' })),
        this.timeoutMs,
      );
    });
    return Promise.race([this.resolver.resolveTxt(name), deadline]).finally(() => clearTimeout(timer));
  }
}
