import type { AppConfig } from '../../infra/config/app-config';
import type { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import type { PgListener } from '../../infra/database/pg-listener.service';
import type { AgentRow, PrincipalRepository } from './principal.repository';
import { PrincipalResolverService } from './principal-resolver.service';
import type { ScimConnectionLookup } from './scim-connection-lookup';
import type { TokenService } from './token.service';

/** A resolver over agent tokens `agent-<n>`, counting the lookups that reach the repository. */
function resolverWith(ttlMs: number): { resolver: PrincipalResolverService; lookups: () => number; announce: (payload: string) => void; reconnect: () => void } {
  const handlers: ((payload: string) => void)[] = [];
  const connected: (() => void)[] = [];
  const listener = {
    on: (_channel: string, fn: (payload: string) => void) => (handlers.push(fn), () => undefined),
    onConnected: (fn: () => void) => (connected.push(fn), () => undefined),
  } as unknown as PgListener;
  let lookups = 0;
  const repo = {
    agent: async (): Promise<AgentRow> => {
      lookups++;
      return { agent_id: `agent-${lookups}`, device_id: 'd', org_id: 'o', partner_id: 'p', site_id: 's', device_status: 'active' };
    },
  } as unknown as PrincipalRepository;
  const tx = { withSystemLookup: (_why: string, fn: () => Promise<unknown>) => fn() } as unknown as TenantTransactionService;
  const config = { principalCacheTtlMs: ttlMs } as AppConfig;
  const resolver = new PrincipalResolverService({} as TokenService, repo, tx, config, {} as ScimConnectionLookup, listener);
  resolver.onModuleInit();
  return { resolver, lookups: () => lookups, announce: (payload) => handlers.forEach((fn) => fn(payload)), reconnect: () => connected.forEach((fn) => fn()) };
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
