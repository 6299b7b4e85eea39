import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../infra/database/db.service';
import type { SoftwareSettings } from '../policies/features/pam.features';
import { AppliedPolicyRow, toAppliedPolicy } from '../policies/resolution/policy-resolution.repository';
import { closestFirst } from '../policies/resolution/policy-resolution.util';
import { ORG_PAM_DEFAULTS, type AppliedSoftwarePolicy, type OrgPamDefaults } from '../pam/decision/decision.types';

/** Everything ingest needs to know before deciding, read in one statement. */
export interface IngestContext {
  deviceStatus: 'active' | 'decommissioned';
  siteId: string;
  /** The transaction's clock: the request time and every time window go by it. */
  now: Date;
  /** The organization's rules version, read here so the compiled-rule cache needs no query of its own. */
  rulesVersion: string;
  defaults: OrgPamDefaults;
  software: AppliedSoftwarePolicy[];
}

/**
 * A PL/pgSQL function (migration 1763700800000): its plans stay cached on the server connection,
 * which survives a transaction pooler; one round trip. The request itself is created by PAM
 * (ElevationIntakeService), which owns app_ingest_insert.
 */
const INGEST_CONTEXT = prepared(
  'ingest_context',
  `SELECT status, site_id, now, rules_version, default_unmatched_verdict, default_approval_duration_minutes, software
     FROM app_ingest_context($1, $2)`,
);

@Injectable()
export class ElevationIngestRepository {
  constructor(private readonly db: DbService) {}

  async context(orgId: string, deviceId: string): Promise<IngestContext | null> {
    const row = await this.db.one<{
      status: 'active' | 'decommissioned';
      site_id: string;
      now: Date;
      rules_version: string;
      default_unmatched_verdict: OrgPamDefaults['defaultUnmatchedVerdict'] | null;
      default_approval_duration_minutes: number | null;
      software: AppliedPolicyRow[];
    }>(INGEST_CONTEXT, [orgId, deviceId]);
    if (!row) return null;
    return {
      deviceStatus: row.status,
      siteId: row.site_id,
      rulesVersion: row.rules_version,
      now: new Date(row.now),
      defaults: row.default_unmatched_verdict
        ? { defaultUnmatchedVerdict: row.default_unmatched_verdict, defaultApprovalDurationMinutes: row.default_approval_duration_minutes ?? 15 }
        : ORG_PAM_DEFAULTS,
      software: closestFirst(row.software.map((r) => toAppliedPolicy<SoftwareSettings>(r))),
    };
  }
}
