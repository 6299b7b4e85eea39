import { Injectable } from '@nestjs/common';
import { ElevationIntakeRepository } from './elevation-intake.repository';
import type { AgentIntakeLog, CreatedElevationRequest, FiledElevationRequest, ObservedElevationRequest, RateBucket } from './elevation-intake.types';

/**
 * Where elevation requests are created (the PAM module owns elevation_requests, its events and the
 * function app_ingest_insert: src/infra/database/table-owners.ts). Agent ingest and the JIT and
 * tool-action flows call it with the one parameter list of a new request (NewElevationRequest);
 * both run in the caller's transaction.
 */
@Injectable()
export class ElevationIntakeService {
  constructor(private readonly repo: ElevationIntakeRepository) {}

  /**
   * An elevation prompt an agent observed: the request, its audit row and its `created` event in
   * one statement, because ingest is the service's hot path and every round trip counts. With a
   * bucket, the device's rate-limit token is spent by the same statement, last, so its row stays
   * locked only until commit; null when the bucket is empty (nothing is written).
   */
  createObserved(request: ObservedElevationRequest, log: AgentIntakeLog, bucket: RateBucket | null): Promise<CreatedElevationRequest | null> {
    return this.repo.insertObserved(request, log, bucket);
  }

  /** A request a person or a tool filed: the row alone; the caller writes its audit row and event through their services. */
  createFiled(request: FiledElevationRequest): Promise<{ id: string; expires_at: Date | null }> {
    return this.repo.insertFiled(request);
  }
}
