import { Injectable, OnModuleInit } from '@nestjs/common';
import { PgListener } from '../../../infra/database/pg-listener.service';
import { DrainState } from '../../health/drain-state';
import { MetricsService } from '../../../infra/metrics/metrics.service';

/** The notification channel a queued command is announced on (migration 1763702200000), payload `<org id>:<device id>`. */
export const AGENT_COMMANDS_CHANNEL = 'agent_commands';

/** Without notifications (connection down, or none configured), a held wait reads its queue this often. */
export const FALLBACK_POLL_MS = 2_000;

/** How a wait ended: something may be queued, the time is up, or the instance is stopping. */
export type WaitOutcome = 'wake' | 'timeout' | 'drain';

/**
 * One held wait of one device's agent. Armed before its first read of the queue, so that a command
 * committed between that read and `next()` still wakes it (`woken` remembers it).
 */
export class CommandWaiter {
  private woken = false;
  private settle: ((outcome: WaitOutcome) => void) | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly hub: CommandWakeups,
    readonly key: string,
  ) {}

  /** Resolves on a wake-up, at the end of `ms`, or at the drain; early to poll when notifications are down. */
  next(ms: number): Promise<WaitOutcome> {
    if (this.hub.draining) return Promise.resolve('drain');
    if (this.woken) {
      this.woken = false;
      return Promise.resolve('wake');
    }
    if (ms <= 0) return Promise.resolve('timeout');
    const polling = !this.hub.notified;
    const wait = polling ? Math.min(ms, FALLBACK_POLL_MS) : ms;
    return new Promise<WaitOutcome>((resolve) => {
      this.settle = resolve;
      this.timer = setTimeout(() => this.end(polling && wait < ms ? 'wake' : 'timeout'), wait);
    });
  }

  /** A wake-up: answers the wait in progress, or the next one. */
  wake(): void {
    if (this.settle) this.end('wake');
    else this.woken = true;
  }

  end(outcome: WaitOutcome): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const settle = this.settle;
    this.settle = null;
    settle?.(outcome);
  }

  close(): void {
    this.end('timeout');
    this.hub.release(this);
  }
}

/**
 * The held waits of this instance, by device, and what wakes them (docs/pam-lifecycle.md, "The
 * command channel"): the notification PostgreSQL sends when a command for the device commits, on
 * whichever instance queued it; every wait at once when the notification connection comes back
 * (one may have been missed while it was down); and the drain, which answers every wait so that a
 * stopping instance does not hold its agents until the wait's end.
 */
@Injectable()
export class CommandWakeups implements OnModuleInit {
  private readonly waiting = new Map<string, Set<CommandWaiter>>();
  private count = 0;

  constructor(
    private readonly listener: PgListener,
    private readonly drainState: DrainState,
    private readonly metrics: MetricsService,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge('rmm_agent_command_waits', "Agents' command waits held open on this instance (GET /agents/:id/commands?wait=)", [], () => [{ labels: {}, value: this.count }]);
    this.listener.on(AGENT_COMMANDS_CHANNEL, (payload) => this.wake(payload));
    this.listener.onConnected(() => this.wakeAll());
    this.drainState.onStart(() => this.drainAll());
  }

  /** Whether wake-ups arrive by notification (else waits poll every FALLBACK_POLL_MS). */
  get notified(): boolean {
    return this.listener.connected;
  }

  get draining(): boolean {
    return this.drainState.draining;
  }

  /** Waits held now. */
  get size(): number {
    return this.count;
  }

  register(orgId: string, deviceId: string): CommandWaiter {
    const key = `${orgId}:${deviceId}`;
    const waiter = new CommandWaiter(this, key);
    let set = this.waiting.get(key);
    if (!set) {
      set = new Set();
      this.waiting.set(key, set);
    }
    set.add(waiter);
    this.count++;
    return waiter;
  }

  release(waiter: CommandWaiter): void {
    const set = this.waiting.get(waiter.key);
    if (!set?.delete(waiter)) return;
    this.count--;
    if (set.size === 0) this.waiting.delete(waiter.key);
  }

  wake(key: string): void {
    for (const waiter of this.waiting.get(key) ?? []) waiter.wake();
  }

  /** After a reconnection: every wait reads its queue again, spread over FALLBACK_POLL_MS so that they do not all read at once. */
  private wakeAll(): void {
    for (const set of this.waiting.values()) for (const waiter of set) setTimeout(() => waiter.wake(), Math.random() * FALLBACK_POLL_MS).unref();
  }

  private drainAll(): void {
    for (const set of this.waiting.values()) for (const waiter of set) waiter.end('drain');
  }
}
