import { performance } from 'node:perf_hooks';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AgentPresenceSink } from '../../../common/agent-presence-sink';
import { APP_CONFIG, type AppConfig } from '../../../infra/config/app-config';
import { RequestContext } from '../../../infra/context/request-context';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AgentPresenceRepository, type AgentSighting } from './agent-presence.repository';

/** The stated reason of the flush's system context (TenantTransactionService.systemContextCounts). */
export const AGENT_PRESENCE_REASON = 'record when agents of every tenant were last seen';

/**
 * When each agent was last seen (agents.last_seen_at), without a write per request.
 *
 * `seen(agentId, orgId)` notes the sighting in memory (one map entry per agent, the latest time
 * wins) and costs no I/O; the AuthGuard calls it for every accepted agent request, and code that
 * holds an agent's request open calls it while it waits. Every `agentPresenceFlushMs` (30 s by
 * default) the agents seen since the last flush are written in one statement, across tenants, in
 * the named system context; an agent whose stored time is already within an interval of the new
 * one (written by another instance) is skipped. So an agent costs at most one write per interval
 * per instance, whatever its rate. A failed flush keeps its sightings for the next one. The
 * application's close flushes what is left (beforeApplicationShutdown: in-flight requests have
 * ended, the pool is still open), so a graceful stop loses nothing.
 *
 * Import AgentPresenceModule (./agent-presence.module) to call it.
 */
@Injectable()
export class AgentPresenceService implements AgentPresenceSink, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AgentPresenceService.name);
  /** Agents seen since the last flush began: agent id → its organization and when (performance.now()). */
  private pending = new Map<string, { orgId: string; at: number }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<number> | null = null;

  constructor(
    private readonly repo: AgentPresenceRepository,
    private readonly tx: TenantTransactionService,
    private readonly cls: RequestContext,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  seen(agentId: string, orgId: string): void {
    const at = performance.now();
    const known = this.pending.get(agentId);
    if (known) known.at = at;
    else this.pending.set(agentId, { orgId, at });
  }

  /** How many agents wait for the next flush on this instance. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * A per-instance interval, not a pg-boss job: what it writes lives in this instance's memory.
   * Started outside any request's context, so its runs never inherit one; unref'd, so it never
   * keeps the process alive.
   */
  onApplicationBootstrap(): void {
    this.timer ??= setInterval(() => {
      // A flush still running (a slow database) is not queued behind: its successor takes everything seen meanwhile.
      if (!this.flushing) void this.flush();
    }, this.config.agentPresenceFlushMs);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /**
   * Writes the agents seen since the last flush, in one statement, after any flush under way.
   * Answers how many rows were written (agents skipped as recent are not counted). Never throws:
   * a failure is logged and its sightings wait for the next flush.
   */
  async flush(): Promise<number> {
    while (this.flushing) await this.flushing;
    if (!this.pending.size) return 0;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.write(batch).finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async write(batch: Map<string, { orgId: string; at: number }>): Promise<number> {
    const now = performance.now();
    // In id order, so that instances flushing at once lock shared rows in one order.
    const sightings: AgentSighting[] = [...batch.keys()].sort().map((agentId) => {
      const { orgId, at } = batch.get(agentId)!;
      return { agentId, orgId, agoMs: Math.max(0, now - at) };
    });
    try {
      return await this.cls.run('fresh', () => this.tx.withSystemContext(AGENT_PRESENCE_REASON, () => this.repo.markSeen(sightings, this.config.agentPresenceFlushMs)));
    } catch (err) {
      // Back for the next flush, unless the agent was seen again meanwhile (the newer sighting stands).
      for (const [agentId, entry] of batch) if (!this.pending.has(agentId)) this.pending.set(agentId, entry);
      this.logger.warn(`Could not record ${batch.size} agent sighting(s), kept for the next flush: ${err instanceof Error ? err.message : String(err)}`);
      return 0;
    }
  }
}
