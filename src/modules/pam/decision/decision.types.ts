import type { SoftwareEntry, SoftwareMode, SoftwareSettings } from '../../policies/features/pam.features';
import type { AppliedPolicy } from '../../policies/resolution/policy-resolution.util';
import type { PamVerdict } from '../rules/engine/rule.types';

/** What the chain decided; `ignored` means no request row at all (spec P3, uac_intercept only). */
export type DecisionOutcome = 'pending' | 'auto_approved' | 'denied' | 'ignored';

/**
 * Which link of the chain produced the outcome. Stored as elevation_requests.decision_source
 * only when the outcome is final (auto_approved, denied); a pending request is decided by a human.
 */
export type DecisionChainSource = 'software_policy' | 'pam_rule' | 'org_default';

export interface DecisionRule {
  id: string;
  name: string;
  verdict: PamVerdict;
  approvalDurationMinutes: number | null;
}

export interface DecisionPolicy {
  id: string;
  name: string;
  mode: SoftwareMode;
}

/** One audit-mode software policy entry that matched the executable. */
export interface SoftwareEvidence {
  policyId: string;
  policyName: string;
  mode: SoftwareMode;
  entryIndex: number;
  entry: SoftwareEntry;
}

export interface Decision {
  outcome: DecisionOutcome;
  /** null when an evaluator failed and the request fell back to pending. */
  source: DecisionChainSource | null;
  /** The PAM rule that matched, whatever its verdict. */
  rule: DecisionRule | null;
  /** The software policy that decided (blocklist or allowlist), else the first audit policy that matched. */
  policy: DecisionPolicy | null;
  /** Window of an auto-approval, in minutes; null for other outcomes. */
  durationMinutes: number | null;
  evidence: SoftwareEvidence[];
  /** Why an evaluator failed (for logs, audit and events); the outcome is then pending. */
  error: string | null;
}

/** pam_org_config, or its defaults when the organization has no row (spec P2.4). */
export interface OrgPamDefaults {
  defaultUnmatchedVerdict: 'require_approval' | 'auto_deny';
  defaultApprovalDurationMinutes: number;
}

export const ORG_PAM_DEFAULTS: OrgPamDefaults = Object.freeze({ defaultUnmatchedVerdict: 'require_approval', defaultApprovalDurationMinutes: 15 });

/** The approval window of an allowlist hit: software policies carry no duration of their own. */
export const ALLOWLIST_APPROVAL_MINUTES = 15;

export type AppliedSoftwarePolicy = AppliedPolicy<SoftwareSettings>;

/**
 * What a caller may already know, saving the chain its own reads. Ingest reads both with the
 * device in one statement.
 */
export interface DecisionContext {
  /**
   * The software policies reaching the device, closest first. The bridge runs for uac_intercept
   * requests only (an observed executable); absent means no software policy applies.
   */
  software?: readonly AppliedSoftwarePolicy[];
  /** The organization's default verdict and approval window (pam_org_config). */
  defaults?: OrgPamDefaults;
  /** The organization's rules version, when the caller read it in its transaction already. */
  rulesVersion?: string;
}
