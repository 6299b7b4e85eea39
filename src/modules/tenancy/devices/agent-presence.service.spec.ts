import type { AppConfig } from '../../../infra/config/app-config';
import { RequestContext } from '../../../infra/context/request-context';
import type { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import type { AgentPresenceRepository, AgentSighting } from './agent-presence.repository';
import { AGENT_PRESENCE_REASON, AgentPresenceService } from './agent-presence.service';

function presence(opts: { fail?: () => boolean; hold?: Promise<void> } = {}) {
  const writes: { sightings: AgentSighting[]; freshMs: number }[] = [];
  const reasons: string[] = [];
  const repo = {
    markSeen: async (sightings: AgentSighting[], freshMs: number) => {
      writes.push({ sightings, freshMs });
      if (opts.hold) await opts.hold;
      if (opts.fail?.()) throw new Error('connection refused');
      return sightings.length;
    },
  } as unknown as AgentPresenceRepository;
  const tx = {
    withSystemContext: (reason: string, fn: () => Promise<unknown>) => {
      reasons.push(reason);
      return fn();
    },
  } as unknown as TenantTransactionService;
  const config = { agentPresenceFlushMs: 30_000 } as AppConfig;
  return { service: new AgentPresenceService(repo, tx, new RequestContext(), config), writes, reasons };
}

const ids = (w: { sightings: AgentSighting[] }) => w.sightings.map((s) => s.agentId);

describe('AgentPresenceService', () => {
  it('writes many sightings of a few agents as one statement with one row per agent, in id order', async () => {
    const { service, writes, reasons } = presence();
    for (let i = 0; i < 50; i++) {
      service.seen('b-agent', 'org-2');
      service.seen('a-agent', 'org-1');
    }
    expect(await service.flush()).toBe(2);
    expect(writes).toHaveLength(1);
    expect(writes[0].sightings.map((s) => [s.agentId, s.orgId])).toEqual([
      ['a-agent', 'org-1'],
      ['b-agent', 'org-2'],
    ]);
    expect(writes[0].freshMs).toBe(30_000);
    expect(reasons).toEqual([AGENT_PRESENCE_REASON]);
  });

  it('sends how long ago the latest sighting was, never a negative age', async () => {
    const { service, writes } = presence();
    service.seen('a', 'o');
    await new Promise((r) => setTimeout(r, 40));
    service.seen('a', 'o');
    await service.flush();
    const [sighting] = writes[0].sightings;
    expect(sighting.agoMs).toBeGreaterThanOrEqual(0);
    expect(sighting.agoMs).toBeLessThan(30);
  });

  it('writes nothing when no agent was seen since the last flush', async () => {
    const { service, writes } = presence();
    service.seen('a', 'o');
    await service.flush();
    expect(await service.flush()).toBe(0);
    expect(writes).toHaveLength(1);
  });

  it('keeps the sightings of a failed flush for the next one', async () => {
    let failing = true;
    const { service, writes } = presence({ fail: () => failing });
    service.seen('a', 'o');
    expect(await service.flush()).toBe(0);
    expect(service.pendingCount).toBe(1);
    failing = false;
    expect(await service.flush()).toBe(1);
    expect(writes.map(ids)).toEqual([['a'], ['a']]);
  });

  it('puts a sighting made during a flush into the next flush, which waits for the first', async () => {
    let release!: () => void;
    const { service, writes } = presence({ hold: new Promise<void>((r) => (release = r)) });
    service.seen('a', 'o');
    const first = service.flush();
    service.seen('b', 'o');
    const second = service.flush();
    release();
    await Promise.all([first, second]);
    expect(writes.map(ids)).toEqual([['a'], ['b']]);
  });

  it('flushes what is left when the application closes', async () => {
    const { service, writes } = presence();
    service.onApplicationBootstrap();
    service.seen('a', 'o');
    await service.beforeApplicationShutdown();
    expect(writes.map(ids)).toEqual([['a']]);
    expect(service.pendingCount).toBe(0);
  });
});
