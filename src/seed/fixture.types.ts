import type { NegatableKey, PamTimeWindow, PamVerdict } from '../modules/pam/rules/engine/rule.types';

/** The statuses a fixture's elevation request can be stored with (the lifecycle of docs/pam-lifecycle.md). */
export type FixtureRequestStatus = 'pending' | 'approved' | 'auto_approved' | 'denied' | 'expired' | 'revoked' | 'actuating';

/** The fixture format (docs/seed-format.md). Every id is optional but an elevation request's; keys are local names for references. */
export interface Fixture {
  partners?: { key: string; id?: string; name: string; status?: 'active' | 'suspended' }[];
  organizations?: { key: string; id?: string; partner: string; name: string; status?: 'active' | 'suspended' }[];
  sites?: { key: string; id?: string; organization: string; name: string; timezone?: string }[];
  deviceGroups?: { key: string; id?: string; organization: string; site?: string; name: string }[];
  devices?: {
    key: string;
    id?: string;
    organization: string;
    site: string;
    groups?: string[];
    hostname: string;
    agentId?: string;
    agentToken?: string;
    status?: 'active' | 'decommissioned';
  }[];
  roles?: { key: string; id?: string; scope: 'organization' | 'partner'; organization?: string; partner?: string; name: string; permissions: string[] }[];
  users?: {
    key: string;
    id?: string;
    email: string;
    name?: string;
    password?: string;
    totpSecret?: string;
    status?: 'active' | 'disabled';
    memberships?: { organization: string; role: string; sites?: string[] }[];
    partnerMembership?: { partner: string; role: string; orgAccess?: 'all' | 'selected'; organizations?: string[]; sites?: string[] };
  }[];
  signerGroups?: { key: string; id?: string; organization: string; name: string; description?: string; signers: string[] }[];
  pamRules?: {
    key: string;
    id?: string;
    organization: string;
    site?: string;
    name: string;
    verdict: PamVerdict;
    priority?: number;
    enabled?: boolean;
    matchSigner?: string;
    /** A signer-group key. */
    matchSignerGroup?: string;
    matchHash?: string;
    matchPathGlob?: string;
    matchParentImage?: string;
    matchCommandLine?: string;
    matchUser?: string;
    matchAdGroup?: string;
    matchToolName?: string;
    matchRiskTier?: number;
    matchNegate?: NegatableKey[];
    timeWindow?: PamTimeWindow;
    approvalDurationMinutes?: number;
  }[];
  elevationRequests?: {
    key: string;
    /** Required: history is matched by id only, so loading again never adds a second copy. */
    id: string;
    /** A device key; the organization and site are the device's. */
    device: string;
    status: FixtureRequestStatus;
    /** When the agent reported the prompt, in hours before the load (fractions allowed). */
    requestedHoursAgo: number;
    subjectUsername: string;
    path: string;
    hash: string;
    signer?: string;
    parentImage?: string;
    commandLine?: string;
    /** The PAM rule key that matched (decides auto_approved and rule denials). */
    rule?: string;
    /** The user key of the technician who approved or denied (and revoked). */
    decidedBy?: string;
    /** Minutes from the prompt to the decision (human decisions; default 4). */
    decidedAfterMinutes?: number;
    /** The approval window in minutes (default: the rule's, else 60). */
    durationMinutes?: number;
    reason?: string;
    revokeReason?: string;
  }[];
}

export type FixtureIds = Record<string, string>;
