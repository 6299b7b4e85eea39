import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../../src/infra/database/embedded-postgres';
import { WebhookDeliveryWorker } from '../../src/modules/webhooks/webhook-delivery.worker';
import type { CustomResult, Scenario } from '../bench.types';
import { seedColdOrg } from './ingest-cold-start.bench';
import { openLoop, promptBody, startChild, waitUntil } from './ingest.bench';

const DEVICES = Number(process.env.BENCH_WEBHOOK_DEVICES ?? 400);
/** Elevation events offered per second (one prompt each). */
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 30);
/** How long the receiver takes to answer each delivery. */
const RECEIVER_MS = Number(process.env.BENCH_WEBHOOK_RECEIVER_MS ?? 200);
/** How long the outbox gets to drain after the load before what is left counts as backlog. */
const DRAIN_SECONDS = 60;

/**
 * Webhooks under an elevation storm (issue 29, item 3): agent ingest as an open loop of RATE prompts
 * a second (each one elevation event: requested, or denied by the organization's default) into an
 * instance that runs the delivery job, first with no subscription, then with one subscription to every
 * elevation event whose receiver (on this machine) answers each request in RECEIVER_MS. It reports the
 * ingest p99 without and with the subscription, how many events were queued and delivered during the
 * load, the backlog at its end, the time to drain it, and the lag from event to delivery. The instance
 * is a development sibling (production refuses WEBHOOKS_ALLOW_INSECURE_LOOPBACK, which lets the
 * deliveries reach the local receiver). Knobs: BENCH_WEBHOOK_RATE, _SECONDS, _RECEIVER_MS, _DEVICES.
 */
export const scenario: Scenario = {
  name: `webhooks: ${RATE} elevation events/s into a subscription whose receiver answers in ${RECEIVER_MS} ms`,
  order: 80,
  async prepare(ctx): Promise<CustomResult> {
    // The runner's own app runs the background jobs with production settings, which refuse the local
    // receiver (insecure_scheme): its delivery worker stands aside, so the sibling below delivers everything.
    await ctx.app.get(WebhookDeliveryWorker, { strict: false }).onModuleDestroy();
    const { ids, tokens, agentIds } = await seedColdOrg(ctx, 'Webhooks', DEVICES);
    const next = () => {
      const i = Math.floor(Math.random() * DEVICES);
      return { method: 'POST', path: `/api/v1/agents/${agentIds[i]}/elevation-requests`, headers: { authorization: `Bearer ${tokens[i]}`, 'content-type': 'application/json' }, body: promptBody(i) };
    };

    let received = 0;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          received++;
          res.writeHead(204).end();
        }, RECEIVER_MS),
      );
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const service = startChild(join(__dirname, '..', '..', 'src', 'main.js'), {
      ...ctx.serviceEnv,
      NODE_ENV: 'development',
      WEBHOOKS_ALLOW_INSECURE_LOOPBACK: 'true',
      START_JOBS: 'true',
      PORT: String(port),
      PUBLIC_URL: url,
    });
    try {
      await waitUntil(service, async () => (await fetch(`${url}/api/v1/health/ready`)).ok);
      await openLoop(url, 3, Math.min(RATE, 100), next);
      const without = await openLoop(url, SECONDS, RATE, next);

      const admin = `Bearer ${await ctx.token(ids.a, { mfa: true })}`;
      const made = await fetch(`${url}/api/v1/webhooks/subscriptions`, {
        method: 'POST',
        headers: { authorization: admin, 'content-type': 'application/json' },
        body: JSON.stringify({ orgId: ids.o, url: receiverUrl, eventTypes: ['elevation.requested', 'elevation.approved', 'elevation.denied', 'elevation.revoked', 'elevation.expired', 'elevation.actuated'] }),
      });
      if (made.status !== 201) throw new Error(`creating the subscription answered ${made.status}: ${await made.text()}`);
      const subscriptionId = ((await made.json()) as { subscription: { id: string } }).subscription.id;

      const receivedBefore = received;
      const loadStart = Date.now();
      const withHooks = await openLoop(url, SECONDS, RATE, next);
      const deliveredDuringLoad = received - receivedBefore;
      const count = async (where: string) =>
        Number((await ctx.ownerQuery<{ n: string }>(`SELECT count(*) AS n FROM webhook_messages WHERE subscription_id = $1 AND ${where}`, [subscriptionId]))[0].n);
      const queued = await count('true');
      const backlogAtEnd = await count(`status = 'pending'`);
      let drainedAfter: number | null = null;
      const drainDeadline = Date.now() + DRAIN_SECONDS * 1000;
      while (Date.now() < drainDeadline) {
        if ((await count(`status = 'pending'`)) === 0) {
          drainedAfter = (Date.now() - loadStart) / 1000 - SECONDS;
          break;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      const [lag] = await ctx.ownerQuery<{ p50: number; p99: number; dead: string }>(
        `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at)) * 1000 AS p50,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at)) * 1000 AS p99,
                count(*) FILTER (WHERE status = 'dead') AS dead
           FROM webhook_messages WHERE subscription_id = $1`,
        [subscriptionId],
      );
      const failures = await ctx.ownerQuery<{ reason: string; n: string }>(
        `SELECT coalesce(failure_reason, 'none') AS reason, count(*) AS n FROM webhook_deliveries WHERE subscription_id = $1 AND outcome = 'failed' GROUP BY 1 ORDER BY 2 DESC`,
        [subscriptionId],
      );
      const name = `webhooks, ${RATE}/s offered ingest for ${SECONDS} s, receiver ${RECEIVER_MS} ms`;
      return {
        kind: 'custom',
        rows: [
          { scenario: `${name}: ingest p99 without a subscription`, value: without.p99, unit: `ms (${without.reqPerSec} req/s answered, ${without.failed} failed)` },
          { scenario: `${name}: ingest p99 with the subscription and its deliveries`, value: withHooks.p99, unit: `ms (${withHooks.reqPerSec} req/s answered, ${withHooks.failed} failed)`, baseline: { value: without.p99, label: 'without' } },
          { scenario: `${name}: events queued / delivered during the load`, value: deliveredDuringLoad, unit: `delivered of ${queued} queued (${Math.round(deliveredDuringLoad / SECONDS)}/s)`, target: 'keeps up' },
          { scenario: `${name}: backlog at the end of the load`, value: backlogAtEnd, unit: `messages; drained ${drainedAfter === null ? `not within ${DRAIN_SECONDS} s` : `${drainedAfter.toFixed(1)} s after`}` },
          { scenario: `${name}: failed attempts`, value: failures.reduce((n, f) => n + Number(f.n), 0), unit: failures.map((f) => `${f.reason} ${f.n}`).join(', ') || 'none' },
          { scenario: `${name}: event to delivery, p50 / p99`, value: Math.round(lag.p99), unit: `ms p99 (p50 ${Math.round(lag.p50)} ms; ${lag.dead} dead)` },
        ],
      };
    } finally {
      service.kill();
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  },
};
