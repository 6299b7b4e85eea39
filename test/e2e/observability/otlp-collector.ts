/**
 * A stand-in for an OpenTelemetry collector: takes OTLP/HTTP exports (JSON, as the service's
 * exporter sends them) on 127.0.0.1 and keeps every span, with its attributes flattened to plain
 * values, for a test to read. Answers each export 200 with an empty partial-success body, as a
 * collector does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: OtlpValue[] } };
type OtlpAttribute = { key: string; value: OtlpValue };

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
  scope: string;
  resource: Record<string, unknown>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

export interface OtlpCollector {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: CollectedSpan[];
  /** Every request body received, as sent, for checks on the raw export. */
  bodies: string[];
  close(): Promise<void>;
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      bodies.push(text);
      spans.push(...flatten(JSON.parse(text)));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function flatten(request: {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { scope?: { name?: string }; spans?: Record<string, unknown>[] }[] }[];
}): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: String(s.traceId),
          spanId: String(s.spanId),
          parentSpanId: typeof s.parentSpanId === 'string' ? s.parentSpanId : '',
          name: String(s.name),
          kind: Number(s.kind),
          attributes: attributes(s.attributes as OtlpAttribute[] | undefined),
          events: ((s.events as { name: string; attributes?: OtlpAttribute[] }[] | undefined) ?? []).map((e) => ({ name: e.name, attributes: attributes(e.attributes) })),
          status: (s.status as CollectedSpan['status'] | undefined) ?? {},
          scope: ss.scope?.name ?? '',
          resource,
        });
      }
    }
  }
  return out;
}

function attributes(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
}

function value(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return null;
}
