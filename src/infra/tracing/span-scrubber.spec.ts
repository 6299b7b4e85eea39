import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { escapeLiteral, inline, parseTemplate } from '../database/sql-text';
import { SpanScrubber, STATEMENT_TEXT_LIMIT, statementWithoutValues, urlWithoutQuery } from './span-scrubber';

/** The SDK's own pipeline, as tracing-sdk.ts builds it: the scrubber first, then the exporting processor. */
function pipeline() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SpanScrubber(), new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('spec'), exported: () => exporter.getFinishedSpans() };
}

describe('statement text in spans', () => {
  it('replaces the values a transaction opening inlines, as sql-text writes them, with ?', () => {
    const template = parseTemplate('SELECT id FROM users WHERE email = $1 AND org_id = $2 AND note = $3');
    const text = inline(template, ['owner@contoso-dental.example', '6f1c2a4e-8d0b-4c1e-9a53-3b7f0d2c9e11', "it's a \\path"])!;
    expect(text).toContain("E'it''s a \\\\path'");
    // escapeLiteral writes an E'…' literal with a space before it, as node-postgres does.
    expect(statementWithoutValues(`BEGIN; SELECT set_config('app.org_id', '6f1c2a4e', true); ${text}`)).toBe(
      'BEGIN; SELECT set_config(?, ?, true); SELECT id FROM users WHERE email = ? AND org_id = ? AND note =  ?',
    );
  });

  it('keeps placeholders, identifiers, quoted identifiers, casts and comments', () => {
    const text = 'SELECT "Weird""Name", t1.col2, $1::uuid, $12 -- the caller\'s org\nFROM t1 /* it\'s /* nested */ */ WHERE x_9 = $2';
    expect(statementWithoutValues(text)).toBe(text);
  });

  it('replaces numbers, every string literal form and dollar-quoted text, but not digits inside names', () => {
    expect(statementWithoutValues("SELECT 42, 3.14, .5, 1e-3, 0x1F, -7 FROM t2 LIMIT 50")).toBe('SELECT ?, ?, ?, ?, ?, -? FROM t2 LIMIT ?');
    expect(statementWithoutValues("SELECT E'a\\'b', B'1010', X'1F', N'x', U&'d\\0061t', 'it''s', $$body ' here$$, $fn$x$fn$")).toBe(
      'SELECT ?, ?, ?, ?, ?, ?, ?, ?',
    );
    expect(statementWithoutValues("SELECT col_e'x'")).toBe('SELECT col_e?');
  });

  it('replaces an unterminated literal to the end, so a cut statement leaks nothing', () => {
    expect(statementWithoutValues("SELECT 'secret value never clo")).toBe('SELECT ?');
    expect(statementWithoutValues('SELECT $tag$secret')).toBe('SELECT ?');
  });

  it('cuts a statement longer than the limit, values replaced first', () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `(${escapeLiteral(`secret-${i}`)}, ${i})`).join(', ');
    const out = statementWithoutValues(`INSERT INTO t (a, b) VALUES ${rows}`);
    expect(out.startsWith('INSERT INTO t (a, b) VALUES (?, ?), (?, ?)')).toBe(true);
    expect(out.endsWith(' …')).toBe(true);
    expect(out.length).toBeLessThanOrEqual(STATEMENT_TEXT_LIMIT + 2);
    expect(out).not.toContain('secret');
    const short = 'SELECT 1';
    expect(statementWithoutValues(short)).toBe('SELECT ?');
  });
});

describe('URLs in spans', () => {
  it('drops the query, the fragment and any credentials', () => {
    expect(urlWithoutQuery('https://user:pw@idp.example/token?code=abc&state=def#frag')).toBe('https://idp.example/token');
    expect(urlWithoutQuery('/api/v1/sso/callback?code=abc')).toBe('/api/v1/sso/callback');
  });
});

describe('the span scrubber in the SDK pipeline', () => {
  it('scrubs a request span before it is exported: no query, no raw path, no error message', () => {
    const { tracer, exported } = pipeline();
    const span = tracer.startSpan('GET', {
      kind: SpanKind.SERVER,
      attributes: { 'url.path': '/api/v1/sso/login/6f1c2a4e', 'url.query': 'redirect=%2Fdevices', 'http.target': '/api/v1/sso/login/6f1c2a4e?redirect=x', 'http.route': '/api/v1/sso/login/:orgId' },
    });
    span.recordException(new Error('invalid input syntax for type uuid: "owner@contoso.example"'));
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'invalid input syntax for type uuid: "owner@contoso.example"' });
    span.updateName('GET /api/v1/sso/login/:orgId');
    span.end();

    const [done] = exported();
    expect(done.name).toBe('GET /api/v1/sso/login/:orgId');
    expect(done.attributes).toEqual({ 'http.route': '/api/v1/sso/login/:orgId' });
    expect(done.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(done.events.map((e) => e.attributes)).toEqual([{ 'exception.type': 'Error' }]);
  });

  it('keeps the path of an outbound call and drops its query string and credentials', () => {
    const { tracer, exported } = pipeline();
    tracer
      .startSpan('GET', { kind: SpanKind.CLIENT, attributes: { 'url.full': 'https://u:p@idp.example/authorize?client_secret=s', 'url.path': '/authorize', 'url.query': '?client_secret=s' } })
      .end();
    expect(exported()[0].attributes).toEqual({ 'url.full': 'https://idp.example/authorize', 'url.path': '/authorize' });
  });

  it('replaces the values of a statement span and drops any parameter attribute', () => {
    const { tracer, exported } = pipeline();
    tracer
      .startSpan('pg.query:SELECT rmm', {
        kind: SpanKind.CLIENT,
        attributes: { 'db.query.text': "SELECT * FROM users WHERE email = 'owner@contoso.example'", 'db.postgresql.values': ['x'], 'db.query.parameter.0': 'x', 'db.system.name': 'postgresql' },
      })
      .end();
    expect(exported()[0].attributes).toEqual({ 'db.query.text': 'SELECT * FROM users WHERE email = ?', 'db.system.name': 'postgresql' });
  });
});
