import type { IncomingMessage } from 'node:http';
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { detectResources, envDetector, hostDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from '../config/app-config';
import { SpanScrubber } from './span-scrubber';
import { installTracing } from './tracing-state';

/** The service's name in every trace back-end, unless OTEL_SERVICE_NAME names it otherwise. */
export const SERVICE_NAME = 'rmm-identity-pam';

/**
 * Requests that are never traced: readiness and liveness probes and Prometheus scrapes, every few
 * seconds from every probe, each a trace of its own that says nothing about a user's request. (The
 * paths are written out here: reading them from the modules would load Nest and Express before they
 * are instrumented.)
 */
const UNTRACED_PATHS = [/^\/api\/v1\/health(\/|\?|$)/, /^\/metrics(\?|$)/];

export interface StartedTracing {
  provider: NodeTracerProvider;
}

/**
 * Starts the OpenTelemetry SDK: a tracer provider with the W3C trace-context propagator (an incoming
 * `traceparent` is continued, and every outbound call sends one), the span scrubber ahead of the
 * batching exporter (span-scrubber.ts), and the instrumentations:
 *
 * - http: a span per request to the service, named by its route template once Express has matched
 *   it, and a span per outbound call made with node:http/https (SafeFetchService: OIDC discovery,
 *   token, UserInfo and JWKS calls, SAML metadata);
 * - express: the route template, and one span for the route's handler (middleware and routers are
 *   left out: a dozen spans per request that say only that helmet ran);
 * - pg: a span per statement of a traced request, without parameter values
 *   (`enhancedDatabaseReporting: false`); statements outside any request (pg-boss polling its queues,
 *   the LISTEN session, pool warming) make no trace of their own (`requireParentSpan`);
 * - undici: a span per fetch() call (the push gateway, error reports).
 *
 * Must run before express, pg and the service's modules are first required: instrumentations patch a
 * module as it is loaded (tracing.ts, imported first by main.ts).
 */
export function startTracing(settings: TracingSettings): StartedTracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: SERVICE_NAME }).merge(detectResources({ detectors: [envDetector, hostDetector] })),
    sampler: sampler(settings),
    spanProcessors: [new SpanScrubber(), new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }))],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.some((p) => p.test(req.url ?? '')),
      }),
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
      new UndiciInstrumentation(),
    ],
  });
  installTracing({
    activeIds: () => {
      const span = trace.getSpan(context.active());
      if (!span) return undefined;
      const ids = span.spanContext();
      return isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : undefined;
    },
    shutdown: (timeoutMs) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs).unref()));
      return Promise.race([provider.shutdown().catch(() => undefined), late]).finally(() => clearTimeout(timer));
    },
  });
  return { provider };
}

function sampler(settings: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.samplerRatio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
