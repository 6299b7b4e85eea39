/**
 * Sustained agent ingest against a service process: the demo device's agent and more enrolled
 * beside it, each ingesting back to back on kept-alive connections until the instance refuses
 * connections. Each device has its own rate limit, so every agent is one loop.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { prompt } from '../agent/agent-kit';
import { demoAgent, send, type scratchDatabase } from './service-process';

export interface IngestAgent {
  id: string;
  token: string;
}

/** The demo device's agent and `more` agents of new devices beside it (same organization and site). */
export async function ingestAgents(db: ReturnType<typeof scratchDatabase>, more: number): Promise<IngestAgent[]> {
  const demo = demoAgent();
  const agents = [demo];
  for (let i = 1; i <= more; i++) {
    const a = { id: randomUUID(), token: `shutdown-test-agent-${randomUUID()}` };
    await db.query(
      `WITH d AS (INSERT INTO devices (org_id, site_id, hostname) SELECT org_id, site_id, $2 FROM devices WHERE id = (SELECT device_id FROM agents WHERE id = $1) RETURNING org_id, id)
       INSERT INTO agents (id, org_id, device_id, token_hash) SELECT $3, org_id, id, $4 FROM d`,
      [demo.id, `SHUTDOWN-WS-${randomUUID().slice(0, 8)}`, a.id, tokenHash(a.token)],
    );
    agents.push(a);
  }
  return agents;
}

export interface IngestLoad {
  /** Ids of the prompts answered 201. */
  accepted: string[];
  /** Every status answered. */
  statuses: number[];
  /** Connection errors (their code). */
  errors: string[];
  /** Resolves once every loop has met a connection error after `stopped()` became true. */
  done: Promise<void>;
}

/** Starts one ingest loop per agent; a loop ends at its first connection error once `stopped()` is true. */
export function sustainedIngest(port: number, agents: IngestAgent[], stopped: () => boolean): IngestLoad {
  const keepAlive = new Agent({ keepAlive: true, maxSockets: agents.length });
  const load: Omit<IngestLoad, 'done'> = { accepted: [], statuses: [], errors: [] };
  let pid = 10_000;
  const loop = async (a: IngestAgent) => {
    for (;;) {
      try {
        const res = await send({
          port,
          method: 'POST',
          path: `/api/v1/agents/${a.id}/elevation-requests`,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${a.token}` },
          body: JSON.stringify(prompt({ pid: pid++ })),
          agent: keepAlive,
        });
        load.statuses.push(res.status);
        if (res.status === 201) load.accepted.push((JSON.parse(res.body) as { id: string }).id);
      } catch (err) {
        load.errors.push((err as NodeJS.ErrnoException).code ?? String(err));
        if (stopped()) return;
      }
    }
  };
  const done = Promise.all(agents.map(loop)).then(() => keepAlive.destroy());
  return { ...load, done };
}
