import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The canonical form of a domain an administrator typed: lower-case ASCII (IDN labels
 * in punycode), without scheme, user info, port, path, one trailing dot or a leading
 * `*.`. Null when what is left is not a multi-label DNS host name (IP literals, single
 * labels, over-long labels or names, characters outside letters, digits and hyphens).
 */
export function normaliseDomain(input: string): string | null {
  if (typeof input !== 'string') return null;
  let host = input.trim().toLowerCase().replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  host = host.split(/[/?#]/, 1)[0];
  host = host.slice(host.lastIndexOf('@') + 1);
  if (host.startsWith('[')) return null;
  host = host.replace(/:\d*$/, '');
  host = host.replace(/\.$/, '');
  host = host.replace(/^\*\./, '');
  if (host === '' || host.includes(':') || isIP(host)) return null;

  // The WHATWG host parser also reads forms such as `0x7f.1` or `1.2.3` as IPv4
  // addresses, so the IP check is repeated on its output.
  const ascii = domainToASCII(host);
  if (ascii === '' || isIP(ascii) || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return null;
  if (/^\d+$/.test(labels[labels.length - 1])) return null;
  return ascii;
}

/**
 * The normalised domain of an email address, or null. Unlike `normaliseDomain`, the
 * part after the `@` must already be a bare host name: an email domain with a port,
 * path or wildcard is malformed, not something to clean up.
 */
export function domainOf(email: string): string | null {
  if (typeof email !== 'string') return null;
  const address = email.trim();
  const at = address.lastIndexOf('@');
  if (at <= 0) return null;
  const domain = address.slice(at + 1);
  if (/[\s/:?#[\]*@\\]/.test(domain)) return null;
  return normaliseDomain(domain);
}
