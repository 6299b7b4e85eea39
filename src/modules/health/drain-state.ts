import { Injectable } from '@nestjs/common';

/**
 * Whether this instance is stopping. Set once by the graceful shutdown (src/shutdown.ts) when
 * the first SIGTERM or SIGINT arrives; from then on readiness answers 503, so a load balancer
 * stops sending, and work that waits on shutdown stops waiting at `deadline`.
 */
@Injectable()
export class DrainState {
  private startedAt: number | null = null;
  private until: number | null = null;
  private readonly listeners = new Set<() => void>();

  get draining(): boolean {
    return this.startedAt !== null;
  }

  /** When the stop must be over (epoch ms), or null while serving. */
  get deadline(): number | null {
    return this.until;
  }

  /** Idempotent: the first call wins. */
  start(graceMs: number, now = Date.now()): void {
    if (this.startedAt !== null) return;
    this.startedAt = now;
    this.until = now + graceMs;
    for (const fn of this.listeners) fn();
  }

  /** Calls `fn` once the drain starts (held requests answer then, so that the stop need not wait for them). */
  onStart(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Milliseconds left before the deadline (0 once passed), or `fallback` while serving. */
  remaining(fallback: number, now = Date.now()): number {
    return this.until === null ? fallback : Math.max(0, this.until - now);
  }
}
