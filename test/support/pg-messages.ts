import type { Pool, PoolClient } from 'pg';
import type { INestApplication } from '@nestjs/common';
import { DbService } from '../../src/infra/database/db.service';

/**
 * Records the messages (each one a round trip) that an application's request-role connections
 * send to PostgreSQL while `during` runs: the text of each, several statements joined by "; "
 * where one message carries several.
 */
export interface PgMessages {
  during(send: () => Promise<unknown>): Promise<string[]>;
  /** The statements of the messages, in order, split at "; " and cut to their first word. */
  words(messages: string[]): string[];
}

export function recordPgMessages(app: INestApplication): PgMessages {
  const pool: Pool = app.get(DbService).pool();
  let sent: string[] | null = null;
  const wrapped = new WeakSet<PoolClient>();
  pool.on('acquire', (client: PoolClient) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text: string };
      sent?.push(typeof first === 'string' ? first : first.text);
      return query(...args);
    };
  });
  return {
    async during(send) {
      sent = [];
      try {
        await send();
        return sent;
      } finally {
        sent = null;
      }
    },
    words: (messages) => messages.flatMap((m) => m.split('; ')).map((s) => s.trim().split(/\s/)[0]),
  };
}
