/** The fixture format (docs/seed-format.md). Every id is optional; keys are local names for references. */
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
}

export type FixtureIds = Record<string, string>;
