/**
 * The port through which the global AuthGuard reports each request of an authenticated agent.
 * `common/` owns the shape; the devices module supplies the implementation
 * (`AgentPresenceService`, src/modules/tenancy/devices/agent-presence.service.ts), which only
 * notes the sighting in memory and writes it later, coalesced.
 */
export abstract class AgentPresenceSink {
  /** Must stay cheap and synchronous: it runs on every agent request. */
  abstract seen(agentId: string, orgId: string): void;
}
