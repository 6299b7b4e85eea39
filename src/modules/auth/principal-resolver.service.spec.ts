import type { AppConfig } from '../../infra/config/app-config';
import type { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import type { PgListener } from '../../infra/database/pg-listener.service';
import type { AgentRow, PrincipalRepository } from './principal.repository';
import { tokenHash } from '../../infra/crypto/secret-box.service';
import { AGENT_LOOKUP_BATCH, PrincipalResolverService } from './principal-resolver.service';
import type { ScimConnectionLookup } from './scim-connection-lookup';
import type { TokenService } from './token.service';

/**
 * A resolver over agent tokens `agent-<n>`, counting the tokens looked up in the repository
 * (`lookups`) and the statements that looked them up (`statements`). A token whose name starts
 * with `revoked` is not found.
 */
function resolverWith(
  ttlMs: number,
  opts: { failing?: boolean } = {},
): { resolver: PrincipalResolverService; lookups: () => number; statements: () => number[]; announce: (payload: string) => void; reconnect: () => void } {
  const handlers: ((payload: string) => void)[] = [];
  const connected: (() => void)[] = [];
  const listener = {
    on: (_channel: string, fn: (payload: string) => void) => (handlers.push(fn), () => undefined),
    onConnected: (fn: () => void) => (connected.push(fn), () => undefined),
  } as unknown as PgListener;
  let lookups = 0;
  const statements: number[] = [];
  const revoked = new Set(Array.from({ length: 10 }, (_, i) => tokenHash(`revoked-${i}`)));
  const repo = {
    agents: async (hashes: string[]): Promise<(AgentRow & { token_hash: string })[]> => {
      statements.push(hashes.length);
      if (opts.failing) throw new Error('connection lost');
      return hashes
        .filter((h) => !revoked.has(h))
        .map((token_hash) => ({ token_hash, agent_id: `agent-${++lookups}`, device_id: 'd', org_id: 'o', partner_id: 'p', site_id: 's', device_status: 'active' }));
    },
  } as unknown as PrincipalRepository;
  const tx = { withSystemLookup: (_why: string, fn: () => Promise<unknown>) => fn(), inTransaction: () => false } as unknown as TenantTransactionService;
  const config = { principalCacheTtlMs: ttlMs } as AppConfig;
  const resolver = new PrincipalResolverService({} as TokenService, repo, tx, config, {} as ScimConnectionLookup, listener);
  resolver.onModuleInit();
  return { resolver, lookups: () => lookups, statements: () => statements, announce: (payload) => handlers.forEach((fn) => fn(payload)), reconnect: () => connected.forEach((fn) => fn()) };
}

describe('PrincipalResolverService cache', () => {
  it('drops the cached agent the database announces as revoked, and no other', async () => {
    const { resolver, lookups, announce } = resolverWith(60_000);
    const a = await resolver.fromAgentToken('agent-a');
    await resolver.fromAgentToken('agent-b');
    announce(`a:${a!.agent!.agentId}`);
    await resolver.fromAgentToken('agent-a');
    await resolver.fromAgentToken('agent-b');
    expect(lookups()).toBe(3);
  });

  it('drops every cached caller on a role change, and when the announcing connection comes back', async () => {
    const { resolver, lookups, announce, reconnect } = resolverWith(60_000);
    await resolver.fromAgentToken('agent-a');
    announce('*:');
    await resolver.fromAgentToken('agent-a');
    reconnect();
    await resolver.fromAgentToken('agent-a');
    expect(lookups()).toBe(3);
  });

  it('answers a credential seen within the TTL without a lookup', async () => {
    const { resolver, lookups } = resolverWith(60_000);
    const first = await resolver.fromAgentToken('agent-a');
    expect(await resolver.fromAgentToken('agent-a')).toBe(first);
    expect(lookups()).toBe(1);
  });

  it('looks a credential up again once its TTL has passed', async () => {
    const { resolver, lookups } = resolverWith(20);
    await resolver.fromAgentToken('agent-a');
    await new Promise((resolve) => setTimeout(resolve, 40));
    await resolver.fromAgentToken('agent-a');
    expect(lookups()).toBe(2);
  });

  it('when full, drops only the least recently used callers, not every cached one', async () => {
    const { resolver, lookups } = resolverWith(60_000);
    await resolver.fromAgentToken('agent-hot');
    for (let i = 0; i < 10_000; i++) {
      await resolver.fromAgentToken(`agent-${i}`);
      if (i % 1000 === 0) await resolver.fromAgentToken('agent-hot');
    }
    const before = lookups();
    await resolver.fromAgentToken('agent-hot');
    await resolver.fromAgentToken('agent-9999');
    expect(lookups()).toBe(before);
    await resolver.fromAgentToken('agent-0');
    expect(lookups()).toBe(before + 1);
  });

  it('caches nothing with a TTL of 0', async () => {
    const { resolver, lookups } = resolverWith(0);
    await resolver.fromAgentToken('agent-a');
    await resolver.fromAgentToken('agent-a');
    expect(lookups()).toBe(2);
  });
});

describe('PrincipalResolverService agent lookups', () => {
  it('answers agents arriving together with one statement, each with its own device, and none for a token not valid now', async () => {
    const { resolver, statements } = resolverWith(60_000);
    const tokens = [...Array.from({ length: 200 }, (_, i) => `agent-${i}`), 'revoked-1'];
    const principals = await Promise.all(tokens.map((t) => resolver.fromAgentToken(t)));
    expect(statements()).toEqual([201]);
    expect(new Set(principals.slice(0, 200).map((p) => p!.agent!.agentId)).size).toBe(200);
    expect(principals[200]).toBeNull();
  });

  it('asks for a token once however many requests of that agent arrive together, and answers them all alike', async () => {
    const { resolver, statements } = resolverWith(0);
    const principals = await Promise.all(Array.from({ length: 5 }, () => resolver.fromAgentToken('agent-same')));
    expect(statements()).toEqual([1]);
    expect(new Set(principals.map((p) => p!.agent!.agentId)).size).toBe(1);
  });

  it(`asks for at most ${AGENT_LOOKUP_BATCH} tokens in one statement`, async () => {
    const { resolver, statements } = resolverWith(60_000);
    await Promise.all(Array.from({ length: AGENT_LOOKUP_BATCH * 2 + 1 }, (_, i) => resolver.fromAgentToken(`agent-${i}`)));
    expect(statements()).toEqual([AGENT_LOOKUP_BATCH, AGENT_LOOKUP_BATCH, 1]);
  });

  it('fails every request of a batch whose statement failed, and caches nothing of it', async () => {
    const { resolver, statements } = resolverWith(60_000, { failing: true });
    const outcomes = await Promise.allSettled([resolver.fromAgentToken('agent-a'), resolver.fromAgentToken('agent-b')]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    await expect(resolver.fromAgentToken('agent-a')).rejects.toThrow('connection lost');
    expect(statements()).toEqual([2, 1]);
  });
});
