import { randomBytes, randomUUID } from 'node:crypto';
import { tokenHash } from '../../src/infra/crypto/secret-box.service';
import type { Scenario } from '../bench.types';

/**
 * What any route of this service costs before it does its own work, next to the bare baseline:
 * the whole NestJS + Express pipeline (request id, helmet, body parsers, logging, CLS, guards,
 * interceptors, filters) on a route that touches no database, and an agent route whose caller is
 * cached and which runs one read in a tenant transaction (BEGIN, the row-level-security
 * settings, the read, COMMIT). These bound what the write paths can reach on this machine.
 * Beside them, the agent's command poll with nothing queued: the fleet's most frequent call.
 */
/** One enrolled device of a fresh organization, and its agent's id and token. */
async function enrolledAgent(ctx: Parameters<Scenario['prepare']>[0], label: string): Promise<{ agentId: string; token: string }> {
  const ids = await ctx.seed({
    partners: [{ key: 'p', name: `${label} Partner ${Date.now()}` }],
    organizations: [{ key: 'o', partner: 'p', name: `${label} Org` }],
    sites: [{ key: 's', organization: 'o', name: `${label} Site` }],
  });
  const token = randomBytes(24).toString('base64url');
  const agentId = randomUUID();
  await ctx.ownerQuery(
    `WITH d AS (INSERT INTO devices (org_id, site_id, hostname) VALUES ($1, $2, $4) RETURNING id)
     INSERT INTO agents (id, org_id, device_id, token_hash) SELECT $3, $1, d.id, $5 FROM d`,
    [ids.o, ids.s, agentId, `${label.toUpperCase()}-1`, tokenHash(token)],
  );
  return { agentId, token };
}

export const scenarios: Scenario[] = [
  {
    name: 'framework floor: GET /api/v1/health (no database, 50 conn)',
    order: 5,
    async prepare() {
      return { kind: 'http', connections: 50, requests: [{ method: 'GET', path: '/api/v1/health' }] };
    },
  },
  {
    name: 'framework floor: GET /api/v1/agents/:id/pam-settings (cached agent, one read transaction, 50 conn)',
    order: 6,
    async prepare(ctx) {
      const { agentId, token } = await enrolledAgent(ctx, 'Floor');
      return { kind: 'http', connections: 50, requests: [{ method: 'GET', path: `/api/v1/agents/${agentId}/pam-settings`, headers: { authorization: `Bearer ${token}` } }] };
    },
  },
  {
    // The call a fleet makes most often: every agent polls for commands, and almost always there are none.
    name: 'agent command poll, nothing queued: GET /api/v1/agents/:id/commands (cached agent, 50 conn)',
    order: 7,
    async prepare(ctx) {
      const { agentId, token } = await enrolledAgent(ctx, 'Poll');
      return { kind: 'http', connections: 50, requests: [{ method: 'GET', path: `/api/v1/agents/${agentId}/commands`, headers: { authorization: `Bearer ${token}` } }] };
    },
  },
];
