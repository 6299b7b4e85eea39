import { BeforeApplicationShutdown, Injectable, Logger, Optional } from '@nestjs/common';
import { REQUEST_KEY, RequestContext } from '../../infra/context/request-context';
import type { Request } from 'express';
import { DrainState } from '../health/drain-state';

const SHUTDOWN_WAIT_MS = 10_000;

/**
 * Work that must not start before the answer has left: a public route whose answer would
 * otherwise reveal (through its timing) what the work found. A task starts once the current
 * response has finished (or its connection closed), in a context of its own, and opens its
 * own transactions. Tasks live in this process: one lost to a crash is lost, which suits work
 * the caller can simply ask for again (a reset link). Shutdown waits a while for the tasks in flight.
 */
@Injectable()
export class AfterResponseService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(AfterResponseService.name);
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly cls: RequestContext,
    @Optional() private readonly drainState?: DrainState,
  ) {}

  schedule(name: string, task: () => Promise<void>): void {
    const res = this.cls.isActive() ? this.cls.get<Request | undefined>(REQUEST_KEY)?.res : undefined;
    const answered = new Promise<void>((resolve) => {
      if (!res || res.writableFinished || res.destroyed) return setImmediate(resolve);
      res.once('finish', () => resolve());
      res.once('close', () => resolve());
    });
    const run: Promise<void> = answered
      .then(() => this.cls.run('fresh', task))
      .catch((err: Error) => this.logger.error(`${name} failed: ${err.message}`))
      .finally(() => this.pending.delete(run));
    this.pending.add(run);
  }

  /** Resolves once every scheduled task has finished, including tasks scheduled meanwhile. */
  async drain(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /**
   * Waits for the tasks in flight, at most until the stop's deadline (a mail server that does not
   * answer must not hold the stop).
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (!this.pending.size) return;
    const waitMs = this.drainState?.remaining(SHUTDOWN_WAIT_MS) ?? SHUTDOWN_WAIT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (this.pending.size) this.logger.warn(`Stopping with ${this.pending.size} after-response task(s) unfinished`);
        resolve();
      }, waitMs);
    });
    await Promise.race([this.drain(), timeout]);
    clearTimeout(timer);
  }
}
