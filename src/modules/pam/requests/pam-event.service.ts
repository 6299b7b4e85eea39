import { Injectable } from '@nestjs/common';
import { RequestContext } from '../../../infra/context/request-context';
import { PRINCIPAL_KEY } from '../../../common/interceptors/tenant-context.interceptor';
import type { Principal } from '../../../common/principal';
import type { ElevationStatus, PamEventType } from './elevation-request.types';
import { PamEventRepository, PamEventRow } from './pam-event.repository';

export interface PamEvent {
  orgId: string;
  elevationRequestId: string;
  type: PamEventType;
  /** null for the event that creates the request. */
  fromStatus: ElevationStatus | null;
  toStatus: ElevationStatus;
  /** Never secret values: these rows are read by anyone who may read the request. */
  details?: Record<string, unknown>;
  /** Defaults to the request's principal; 'system' for background work. */
  actor?: { type: PamEventRow['actorType']; id: string | null };
}

export function actorOf(p: Principal | undefined): { type: PamEventRow['actorType']; id: string | null } {
  if (!p || p.kind === 'anonymous') return { type: 'system', id: null };
  if (p.kind === 'agent') return { type: 'agent', id: p.agent?.agentId ?? null };
  if (p.kind === 'api_key') return { type: 'api_key', id: p.apiKeyId };
  return { type: 'user', id: p.userId };
}

/**
 * The transition log of elevation requests (pam_elevation_events): one row per decision and per
 * status change, written in the same transaction as the change itself. Agent ingest records its
 * `created` event here too.
 */
@Injectable()
export class PamEventService {
  constructor(
    private readonly repo: PamEventRepository,
    private readonly cls: RequestContext,
  ) {}

  async record(events: PamEvent | readonly PamEvent[]): Promise<void> {
    const list = Array.isArray(events) ? (events as readonly PamEvent[]) : [events as PamEvent];
    const fallback = actorOf(this.cls.isActive() ? this.cls.get<Principal>(PRINCIPAL_KEY) : undefined);
    await this.repo.insert(
      list.map((e) => {
        const actor = e.actor ?? fallback;
        return {
          orgId: e.orgId,
          elevationRequestId: e.elevationRequestId,
          type: e.type,
          fromStatus: e.fromStatus,
          toStatus: e.toStatus,
          actorType: actor.type,
          actorId: actor.id,
          details: e.details ?? {},
        };
      }),
    );
  }
}
