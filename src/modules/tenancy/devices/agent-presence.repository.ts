import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

/** An agent an instance has seen, and how long before the flush (on the instance's monotonic clock). */
export interface AgentSighting {
  agentId: string;
  orgId: string;
  agoMs: number;
}

/**
 * agents.last_seen_at, written for AgentPresenceService in the caller's transaction (a system
 * context: one flush covers the agents of every tenant the instance served).
 */
@Injectable()
export class AgentPresenceRepository {
  constructor(private readonly db: DbService) {}

  /**
   * One statement for every sighting: last_seen_at becomes the database's now() less how long ago
   * the instance saw the agent, so the instances' clocks never enter the column. An agent whose
   * stored time is already within `freshMs` of that (another instance wrote it) is skipped, and so
   * is a revoked one. Answers how many rows were written.
   */
  markSeen(sightings: readonly AgentSighting[], freshMs: number): Promise<number> {
    if (!sightings.length) return Promise.resolve(0);
    return this.db.exec(
      `UPDATE agents a SET last_seen_at = x.seen_at
         FROM (SELECT s.id, s.org_id, now() - s.ago_ms * interval '1 millisecond' AS seen_at
                 FROM unnest($1::uuid[], $2::uuid[], $3::float8[]) AS s(id, org_id, ago_ms)) x
        WHERE a.id = x.id AND a.org_id = x.org_id AND a.revoked_at IS NULL
          AND (a.last_seen_at IS NULL OR a.last_seen_at < x.seen_at - $4::float8 * interval '1 millisecond')`,
      [sightings.map((s) => s.agentId), sightings.map((s) => s.orgId), sightings.map((s) => s.agoMs), freshMs],
    );
  }
}
