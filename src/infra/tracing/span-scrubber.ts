import { SpanKind, type AttributeValue } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * What never leaves the service in a span, whatever an instrumentation records: one place that
 * enforces it, on every span as it ends and before any exporter sees it (`onEnding`, which runs
 * while the span can still be changed; the SDK's versions are pinned in package.json and
 * span-scrubber.spec.ts fails if that hook stops being called).
 *
 * - Query strings: a login start carries `redirect=…`, an IdP's callback its `code` and `state`, a
 *   list its filters. `url.query` is dropped; `url.full` loses its query, fragment and any user
 *   name or password.
 * - Raw paths of requests to the service: they hold ids and, on a mistyped URL, anything a client
 *   sent. A request's span is named by its route template (`GET /api/v1/sso/login/:orgId`) and keeps
 *   `http.route`; `url.path` goes. Outbound calls keep their path (which IdP endpoint was slow).
 * - Statement values: a transaction's opening message carries its first statement's values as
 *   literals (docs/architecture.md, "one round trip to open"), so the statement text is kept with
 *   every literal replaced by `?`; parameter attributes of any kind are dropped.
 * - Error messages, which may quote a value (`invalid input syntax for type uuid: "…"`): a failed
 *   span keeps its error status; exception events keep `exception.type` only. The
 *   message is in the log line of the same request, which carries the trace id and is redacted.
 */
export class SpanScrubber implements SpanProcessor {
  onStart(): void {}

  onEnding(span: Span): void {
    scrubSpan(span);
  }

  onEnd(_span: ReadableSpan): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Attributes that are dropped wherever they appear (a prefix ends with a dot). */
const DROPPED = ['url.query', 'http.target', 'db.postgresql.values', 'db.query.parameter.', 'http.request.header.', 'http.response.header.'];
/** Dropped on the service's own request spans only: the raw path. */
const DROPPED_ON_SERVER = ['url.path'];
const URL_ATTRIBUTES = ['url.full', 'http.url'];
const STATEMENT_ATTRIBUTES = ['db.query.text', 'db.statement'];
const EXCEPTION_KEPT = new Set(['exception.type']);

export function scrubSpan(span: Span): void {
  const attributes = span.attributes as Record<string, AttributeValue | undefined>;
  for (const key of Object.keys(attributes)) {
    const dropped = DROPPED.some((d) => (d.endsWith('.') ? key.startsWith(d) : key === d)) || (span.kind === SpanKind.SERVER && DROPPED_ON_SERVER.includes(key));
    if (dropped) delete attributes[key];
  }
  for (const key of URL_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value === 'string') attributes[key] = urlWithoutQuery(value);
  }
  for (const key of STATEMENT_ATTRIBUTES) {
    const value = attributes[key];
    if (typeof value === 'string') attributes[key] = statementWithoutValues(value);
  }
  if (span.status.message !== undefined) span.setStatus({ code: span.status.code });
  for (const event of span.events) {
    if (!event.attributes) continue;
    for (const key of Object.keys(event.attributes)) if (!EXCEPTION_KEPT.has(key) && key.startsWith('exception.')) delete event.attributes[key];
  }
}

/** The URL without user name, password, query and fragment; a value that is not a URL is cut at its first `?` or `#`. */
export function urlWithoutQuery(value: string): string {
  try {
    const url = new URL(value);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString();
  } catch {
    return value.split(/[?#]/, 1)[0];
  }
}

/** Longer statements are cut here: an import's multi-row insert stays readable without weighing megabytes. */
export const STATEMENT_TEXT_LIMIT = 8192;
const IDENT = /[A-Za-z0-9_$\u0080-\uffff]/;
const IDENT_START = /[A-Za-z_\u0080-\uffff]/;
/** Letters that may prefix a string literal: E'…' (escapes), B'…' and X'…' (bit strings), N'…' (national). */
const LITERAL_PREFIX = /^[EeBbXxNn]$/;
/** A numeric constant at `lastIndex` (sticky: no copy of the rest of a long statement per number). */
const NUMBER = /(?:0[xX][0-9A-Fa-f_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)/y;

/**
 * The statement with each constant replaced by `?`: string literals (with any prefix, E'…' with its
 * backslash escapes, U&'…'), dollar-quoted text and numbers. Placeholders ($1), identifiers, quoted
 * identifiers, keywords and comments stay, so the statement reads as the code wrote it. Constants the
 * code itself wrote ('active', LIMIT 50) go too: nothing in the text tells them from a value that was
 * inlined, and the code says what they were.
 */
export function statementWithoutValues(text: string): string {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n && out.length < STATEMENT_TEXT_LIMIT) {
    const c = text[i];
    if (c === "'") {
      i = skipLiteral(text, i, false);
      out += '?';
    } else if (IDENT_START.test(c)) {
      let end = i + 1;
      while (end < n && IDENT.test(text[end])) end++;
      const word = text.slice(i, end);
      if (text[end] === "'" && LITERAL_PREFIX.test(word)) {
        i = skipLiteral(text, end, word === 'E' || word === 'e');
        out += '?';
      } else if ((word === 'U' || word === 'u') && text[end] === '&' && text[end + 1] === "'") {
        i = skipLiteral(text, end + 1, false);
        out += '?';
      } else {
        out += word;
        i = end;
      }
    } else if (c === '"') {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && text[end + 1] === '"') end = text.indexOf('"', end + 2);
      end = end === -1 ? n : end + 1;
      out += text.slice(i, end);
      i = end;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? n : end;
      out += text.slice(i, stop);
      i = stop;
    } else if (c === '/' && text[i + 1] === '*') {
      let depth = 1;
      let end = i + 2;
      while (end < n && depth > 0) {
        if (text[end] === '/' && text[end + 1] === '*') (depth++, (end += 2));
        else if (text[end] === '*' && text[end + 1] === '/') (depth--, (end += 2));
        else end++;
      }
      out += text.slice(i, end);
      i = end;
    } else if (c === '$') {
      const placeholder = /^\$\d+/.exec(text.slice(i, i + 12));
      const tag = placeholder ? null : /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i, i + 64));
      if (placeholder) {
        out += placeholder[0];
        i += placeholder[0].length;
      } else if (tag) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        i = end === -1 ? n : end + tag[0].length;
        out += '?';
      } else {
        out += c;
        i++;
      }
    } else if (/[0-9.]/.test(c) && numberAt(text, i) > 0) {
      out += '?';
      i += numberAt(text, i);
    } else {
      out += c;
      i++;
    }
  }
  return i < n || out.length > STATEMENT_TEXT_LIMIT ? `${out.slice(0, STATEMENT_TEXT_LIMIT)} …` : out;
}

/** The length of the number that starts at `i`, 0 when none does. */
function numberAt(text: string, i: number): number {
  NUMBER.lastIndex = i;
  const match = NUMBER.exec(text);
  return match ? match[0].length : 0;
}

/** The index after the literal whose opening quote is at `quote` (the end of the text when it never closes). */
function skipLiteral(text: string, quote: number, escapes: boolean): number {
  let i = quote + 1;
  const n = text.length;
  while (i < n) {
    if (escapes && text[i] === '\\') i += 2;
    else if (text[i] === "'" && text[i + 1] === "'") i += 2;
    else if (text[i] === "'") return i + 1;
    else i++;
  }
  return n;
}
