/**
 * What the rest of the service knows of tracing, without loading any of it: the log mixin asks for
 * the active trace's ids, the graceful stop asks for a flush. Both are no-ops until tracing-sdk.ts
 * installs itself, which happens only when an OTLP endpoint is configured, so with tracing off a
 * log line costs one comparison more and nothing of OpenTelemetry is ever required.
 */

/** The ids a log line carries while a span is active: W3C hex, as trace back-ends search for them. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

interface InstalledTracing {
  /** The active span's ids, or undefined outside any span. */
  activeIds(): TraceIds | undefined;
  /** Ends and exports what is still buffered, at most `timeoutMs`. */
  shutdown(timeoutMs: number): Promise<void>;
}

let installed: InstalledTracing | null = null;

export function installTracing(tracing: InstalledTracing): void {
  installed = tracing;
}

export function tracingInstalled(): boolean {
  return installed !== null;
}

/** The ids of the span active in this asynchronous context, when tracing is on and one is. */
export function activeTraceIds(): TraceIds | undefined {
  return installed === null ? undefined : installed.activeIds();
}

/**
 * Exports the spans still buffered and stops tracing, waiting at most `timeoutMs` (a collector that
 * does not answer must not hold the stop up); nothing to do when tracing is off.
 */
export async function stopTracing(timeoutMs: number): Promise<void> {
  const current = installed;
  if (!current) return;
  installed = null;
  await current.shutdown(timeoutMs);
}
