import type { SoftwareEvidence } from '../decision/decision.types';
import type { FlowType } from '../rules/engine/rule.types';

/** What every new elevation request is created with, whichever flow files it. */
interface NewElevationRequestBase {
  orgId: string;
  siteId: string;
  deviceId: string;
  status: 'pending' | 'auto_approved' | 'denied';
  subjectUsername: string;
  reason: string | null;
  /** An auto-approval's window; for a JIT request also the window asked for while pending. */
  durationMinutes: number | null;
  /** Only for an outcome the chain made final (auto_approved, denied). */
  decisionSource: 'software_policy' | 'pam_rule' | 'org_default' | null;
  matchedPolicyId: string | null;
  matchedPolicyName: string | null;
  pamRuleId: string | null;
  pamRuleName: string | null;
}

/** An elevation prompt an agent observed on its device. */
export interface ObservedElevationRequest extends NewElevationRequestBase {
  flowType: 'uac_intercept';
  reason: string;
  targetExecutablePath: string;
  targetExecutableHash: string;
  targetExecutableSigner: string | null;
  parentImage: string | null;
  commandLine: string | null;
  pid: number | null;
  observedAt: string | null;
  softwareEvidence: SoftwareEvidence[];
}

/** A request a person (just-in-time admin) or a tool (an AI tool action) files. */
export interface FiledElevationRequest extends NewElevationRequestBase {
  flowType: Exclude<FlowType, 'uac_intercept'>;
  subjectUserId: string | null;
  toolName: string | null;
  toolAction: string | null;
  riskTier: number | null;
  actionDigest: string | null;
}

/** The one parameter list of a new elevation request: agent ingest and the flows both create rows from it. */
export type NewElevationRequest = ObservedElevationRequest | FiledElevationRequest;

/** The audit row and the `created` event written with an observed request (same details in both; never secrets). */
export interface AgentIntakeLog {
  agentId: string;
  auditAction: string;
  details: Record<string, unknown>;
  requestId: string | null;
  ip: string | null;
}

/** The device's rate-limit bucket (agent_rate_buckets), spent in the same statement as the insert. */
export interface RateBucket {
  burst: number;
  ratePerSecond: number;
}

export interface CreatedElevationRequest {
  id: string;
  requested_at: Date;
  expires_at: Date | null;
}
