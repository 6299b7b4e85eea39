import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted (by UTF-16 code units, as RFC 8785 orders them) at every depth and
 * no insignificant whitespace, so that two encodings of the same value are the same string.
 * Array order is kept: it is meaningful. Numbers use JavaScript's shortest round-trip form, as in
 * RFC 8785. Values JSON cannot carry (undefined, functions) are dropped from objects, as
 * JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('Non-finite numbers have no JSON form');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined && typeof (value as Record<string, unknown>)[k] !== 'function')
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

/** actionDigest of a tool action: SHA-256 (hex) of the canonical JSON of its input. */
export function actionDigest(input: unknown): string {
  return createHash('sha256').update(canonicalJson(input), 'utf8').digest('hex');
}
