import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Client, escapeIdentifier } from 'pg';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/** First wait before connecting again after the connection is lost; it doubles up to the maximum. */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 5_000;

/**
 * PostgreSQL notifications for this instance (LISTEN), on one session connection of its own.
 * LISTEN needs a session: behind a transaction pooler a LISTEN would stay on a server connection
 * the next client borrows, so this connection goes straight to PostgreSQL with the owner URL
 * (DATABASE_URL), as pg-boss does; sending a notification (NOTIFY, pg_notify) works through the
 * pooler, as it takes effect at the commit of the sender's transaction.
 *
 * Notifications are a wake-up, never the data: one sent while this connection is down is lost, so
 * every listener learns of each (re)connection (`onConnected`) and reads what it may have missed.
 */
@Injectable()
export class PgListener implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('PgListener');
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private readonly connectedHandlers = new Set<() => void>();
  private client: Client | null = null;
  private retryMs = RECONNECT_FIRST_MS;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Whether notifications arrive now (false before the first connection, while reconnecting, and without DATABASE_URL). */
  get connected(): boolean {
    return this.client !== null;
  }

  /** Calls `handler` with each notification's payload on `channel`; returns the unsubscribe. */
  on(channel: string, handler: (payload: string) => void): () => void {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      this.client?.query(`LISTEN ${escapeIdentifier(channel)}`).catch((err: Error) => this.lost(err));
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Calls `fn` after every (re)connection, once LISTEN is in force on every channel. */
  onConnected(fn: () => void): () => void {
    this.connectedHandlers.add(fn);
    return () => this.connectedHandlers.delete(fn);
  }

  onApplicationBootstrap(): void {
    if (this.config.databaseUrl) void this.connect();
    else this.logger.warn('DATABASE_URL is not set: no notifications; waits fall back to polling');
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    this.retry = null;
    if (this.closed) return;
    const client = new Client({ connectionString: this.config.databaseUrl, application_name: 'rmm-listen', keepAlive: true });
    client.on('error', (err) => this.lost(err, client));
    client.on('end', () => this.lost(null, client));
    client.on('notification', (n) => {
      for (const handler of this.handlers.get(n.channel) ?? []) handler(n.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${escapeIdentifier(channel)}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      this.lost(err as Error);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = RECONNECT_FIRST_MS;
    for (const fn of this.connectedHandlers) fn();
  }

  private lost(err: Error | null, client: Client | null = this.client): void {
    if (client !== this.client && this.client !== null) return;
    if (this.client === client) this.client = null;
    if (this.closed || this.retry) return;
    if (err) this.logger.warn(`Notification connection lost (${err.message}); reconnecting in ${this.retryMs} ms`);
    this.retry = setTimeout(() => void this.connect(), this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
  }
}
