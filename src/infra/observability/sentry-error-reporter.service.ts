import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ErrorReporter, type ErrorEvent } from './error-reporter.service';

export interface SentryTarget {
  /** The store endpoint: <scheme>://<host>[/<path>]/api/<project>/store/ */
  storeUrl: URL;
  publicKey: string;
}

/** Reads a Sentry DSN (`<scheme>://<publicKey>@<host>[/<path>]/<projectId>`); null when malformed. */
export function parseSentryDsn(dsn: string): SentryTarget | null {
  let url: URL;
  try {
    url = new URL(dsn);
  } catch {
    return null;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !url.username) return null;
  const segments = url.pathname.split('/').filter(Boolean);
  const projectId = segments.pop();
  if (!projectId || !/^\d+$/.test(projectId)) return null;
  const prefix = segments.length > 0 ? `/${segments.join('/')}` : '';
  return {
    storeUrl: new URL(`${url.protocol}//${url.host}${prefix}/api/${projectId}/store/`),
    publicKey: decodeURIComponent(url.username),
  };
}

const TIMEOUT_MS = 5000;

/**
 * Sends each event to a Sentry-compatible collector (the store endpoint of the DSN) and to
 * the fallback reporter, so the log keeps a copy when the collector is unreachable. A single
 * JSON POST per event over the runtime's fetch: @sentry/node would bring its own global
 * instrumentation (HTTP, database, unhandled-rejection hooks) for what is a handful of warnings
 * a day from the PAM rule checks (docs/operations.md, "Libraries").
 */
export class SentryErrorReporterService extends ErrorReporter {
  private readonly logger = new Logger('SentryErrorReporterService');

  constructor(
    private readonly target: SentryTarget,
    private readonly fallback: ErrorReporter,
    private readonly environment: string,
  ) {
    super();
  }

  async report(event: ErrorEvent): Promise<void> {
    await this.fallback.report(event);
    try {
      await this.send(event);
    } catch (error) {
      const cause = (error as Error & { cause?: { code?: string } }).cause?.code;
      this.logger.warn({ tag: event.tag, reason: cause ? `${(error as Error).message} (${cause})` : (error as Error).message }, 'Could not deliver an error event to the collector');
    }
  }

  private async send(event: ErrorEvent): Promise<void> {
    const body = JSON.stringify({
      event_id: randomUUID().replace(/-/g, ''),
      timestamp: new Date().toISOString(),
      platform: 'node',
      level: event.level,
      logger: 'pam',
      environment: this.environment,
      message: { formatted: event.message },
      tags: { tag: event.tag },
      fingerprint: [event.tag, ...Object.values(event.context ?? {}).filter((v) => typeof v === 'string').slice(0, 2)],
      extra: event.context ?? {},
    });
    // The signal also bounds reading the answer, so a collector that trickles its body cannot hold a report.
    const res = await fetch(this.target.storeUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-sentry-auth': `Sentry sentry_version=7, sentry_key=${this.target.publicKey}, sentry_client=rmm-pam/1.0`,
      },
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`collector answered ${res.status}`);
  }
}
