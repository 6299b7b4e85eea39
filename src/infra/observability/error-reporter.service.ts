import { Injectable, Logger } from '@nestjs/common';

/** One event for error tracking: grouped and searched by `tag`. */
export interface ErrorEvent {
  /** Stable machine tag, e.g. pam_rule_risk_tier_unreachable. */
  tag: string;
  level: 'error' | 'warning';
  message: string;
  /** Identifiers that help act on the event; never secrets. */
  context?: Record<string, unknown>;
}

/**
 * Where operational errors that need a person's attention go. The default writes them to
 * the log; with SENTRY_DSN set they also reach a Sentry-compatible collector. Reporting is
 * best effort and never throws.
 */
export abstract class ErrorReporter {
  abstract report(event: ErrorEvent): Promise<void>;
}

@Injectable()
export class LoggingErrorReporterService extends ErrorReporter {
  private readonly logger = new Logger('ErrorReporter');

  async report(event: ErrorEvent): Promise<void> {
    const entry = { tag: event.tag, ...event.context };
    if (event.level === 'error') this.logger.error(entry, event.message);
    else this.logger.warn(entry, event.message);
  }
}
