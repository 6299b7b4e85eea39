import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { WebhookDeliveryWorker } from '../../../src/modules/webhooks/webhook-delivery.worker';
import { ownerQuery } from '../../support/test-app';
import { bearer, PamWorld } from '../pam-lifecycle/pam-lifecycle.kit';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** How the receiver answers a request: a status, or 'drop' (the connection is cut, as by a restart), or 'hang' (never). */
export type Answer = number | 'drop' | 'hang' | { redirect: string };

/**
 * A local HTTP receiver. Each path answers with the next answer of its script (200 once the script
 * runs out) and records what it got. The service reaches it through WEBHOOKS_ALLOW_INSECURE_LOOPBACK,
 * the development and test setting that lets http://127.0.0.1 through the SSRF-safe client.
 */
export class Receiver {
  readonly received: Received[] = [];
  private readonly scripts = new Map<string, Answer[]>();
  private readonly hanging = new Set<ServerResponse>();
  private server!: Server;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  script(path: string, answers: Answer[]): void {
    this.scripts.set(path, [...answers]);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.received.push({ path, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
      const answer = this.scripts.get(path)?.shift() ?? 200;
      if (answer === 'drop') return void req.socket.destroy();
      if (answer === 'hang') return void this.hanging.add(res);
      if (typeof answer === 'object') {
        res.writeHead(302, { location: answer.redirect }).end();
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  }
}

export const worker = (w: PamWorld) => w.t.app.get(WebhookDeliveryWorker);

export function subscribe(w: PamWorld, token: string, body: Record<string, unknown>) {
  return request(w.t.baseUrl).post('/api/v1/webhooks/subscriptions').set(bearer(token)).send(body);
}

/** The messages queued for a subscription, oldest first. */
export function messagesOf(subscriptionId: string): Promise<{ id: string; event_type: string; status: string; attempts: number; payload: any }[]> {
  return ownerQuery(`SELECT id, event_type, status, attempts, payload FROM webhook_messages WHERE subscription_id = $1 ORDER BY created_at, id`, [subscriptionId]);
}

/** Makes a subscription's waiting messages due now, as if their backoff had passed. */
export async function dueNow(subscriptionId: string): Promise<void> {
  await ownerQuery(`UPDATE webhook_messages SET next_attempt_at = now() WHERE subscription_id = $1 AND status = 'pending'`, [subscriptionId]);
}

export function deliveries(w: PamWorld, token: string, subscriptionId: string, query: Record<string, string> = {}) {
  return request(w.t.baseUrl).get(`/api/v1/webhooks/subscriptions/${subscriptionId}/deliveries`).query(query).set(bearer(token));
}
