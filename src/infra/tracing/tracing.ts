/**
 * Imported for its effect, before anything else, by the service's entry point (main.ts's first
 * import; tracing-entry.spec.ts keeps it there): when an OTLP endpoint is configured, the
 * OpenTelemetry SDK starts here, before Express, pg and the service's modules are first required,
 * since an instrumentation patches a module as it is loaded. With no endpoint nothing of
 * OpenTelemetry is required at all.
 *
 * A malformed setting starts no tracing here and is reported by loadConfig a moment later, with
 * every other setting's problems, as a failed start.
 */
import { ConfigError, tracingSettings, type TracingSettings } from '../config/app-config';

function configured(): TracingSettings | null {
  try {
    return tracingSettings();
  } catch (err) {
    if (err instanceof ConfigError) return null;
    throw err;
  }
}

const settings = configured();
if (settings) {
  // Required only here, so that with tracing off none of the SDK is loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('./tracing-sdk') as typeof import('./tracing-sdk')).startTracing(settings);
}
