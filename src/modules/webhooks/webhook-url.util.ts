import { WEBHOOK_LIMITS } from './webhook-event-types';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Why a subscription URL is refused, or null when it is acceptable: an absolute https URL of at
 * most 2,048 characters, with a host, without credentials or a fragment. `http:` only to a
 * loopback host, and only where WEBHOOKS_ALLOW_INSECURE_LOOPBACK is on (development and tests;
 * production refuses the setting). Whether the host resolves to a public address is checked at
 * every delivery, by the SSRF-safe client, since a DNS answer can change after creation.
 */
export function webhookUrlProblem(url: string, allowInsecureLoopback: boolean): string | null {
  if (url.length > WEBHOOK_LIMITS.urlLength) return `url must be at most ${WEBHOOK_LIMITS.urlLength} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute URL';
  }
  if (parsed.username !== '' || parsed.password !== '') return 'url must not contain credentials';
  if (parsed.hash !== '' || url.includes('#')) return 'url must not contain a fragment';
  if (parsed.hostname === '') return 'url must name a host';
  if (parsed.protocol === 'https:') return null;
  if (parsed.protocol === 'http:' && allowInsecureLoopback && LOOPBACK_HOSTS.has(parsed.hostname)) return null;
  return 'url must use https';
}
