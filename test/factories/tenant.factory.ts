import { randomBytes, randomUUID } from 'node:crypto';
import type { Fixture } from '../../src/seed/fixture.types';

export const PASSWORD = 'correct-horse-battery-staple';
export const TOTP_SECRET = 'JBSWY3DPEHPK3PXP';

export const uniq = (label = 'x') => `${label}-${randomBytes(4).toString('hex')}`;

/**
 * A partner with two organizations (A with sites A1 and A2, B with site B1), a device per site,
 * and users: an organization admin of A (MFA enrolled), a read-only member of A, a member of A
 * restricted to site A1, an admin of B, a partner technician (all organizations) and a
 * technician limited to organization A. All names are unique per call.
 */
export function tenantFixture(label = uniq('t')): Fixture & { emails: Record<string, string> } {
  const domain = `${label}.example`;
  const email = (who: string) => `${who}@${domain}`;
  const emails = {
    adminA: email('admin-a'),
    readerA: email('reader-a'),
    siteA1: email('site-a1'),
    adminB: email('admin-b'),
    tech: email('tech'),
    techA: email('tech-a'),
  };
  return {
    emails,
    partners: [{ key: 'partner', name: `Partner ${label}` }],
    organizations: [
      { key: 'orgA', partner: 'partner', name: `Org A ${label}` },
      { key: 'orgB', partner: 'partner', name: `Org B ${label}` },
    ],
    sites: [
      { key: 'siteA1', organization: 'orgA', name: 'A1', timezone: 'America/Chicago' },
      { key: 'siteA2', organization: 'orgA', name: 'A2' },
      { key: 'siteB1', organization: 'orgB', name: 'B1' },
    ],
    deviceGroups: [{ key: 'groupA1', organization: 'orgA', site: 'siteA1', name: 'Workstations' }],
    devices: [
      { key: 'deviceA1', organization: 'orgA', site: 'siteA1', groups: ['groupA1'], hostname: `WS-A1-${label}`, agentId: randomUUID(), agentToken: `agent-${label}-a1` },
      { key: 'deviceA2', organization: 'orgA', site: 'siteA2', hostname: `WS-A2-${label}`, agentId: randomUUID(), agentToken: `agent-${label}-a2` },
      { key: 'deviceB1', organization: 'orgB', site: 'siteB1', hostname: `WS-B1-${label}`, agentId: randomUUID(), agentToken: `agent-${label}-b1` },
    ],
    roles: [
      { key: 'adminRoleA', scope: 'organization', organization: 'orgA', name: 'Admin', permissions: ['*'] },
      { key: 'readerRoleA', scope: 'organization', organization: 'orgA', name: 'Reader', permissions: ['organizations:read', 'devices:read', 'audit:read'] },
      { key: 'adminRoleB', scope: 'organization', organization: 'orgB', name: 'Admin', permissions: ['*'] },
      { key: 'techRole', scope: 'partner', partner: 'partner', name: 'Technician', permissions: ['*'] },
    ],
    users: [
      { key: 'adminA', email: emails.adminA, name: 'Admin A', password: PASSWORD, totpSecret: TOTP_SECRET, memberships: [{ organization: 'orgA', role: 'adminRoleA' }] },
      { key: 'readerA', email: emails.readerA, name: 'Reader A', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'readerRoleA' }] },
      { key: 'siteA1User', email: emails.siteA1, name: 'Site A1', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'adminRoleA', sites: ['siteA1'] }] },
      { key: 'adminB', email: emails.adminB, name: 'Admin B', password: PASSWORD, memberships: [{ organization: 'orgB', role: 'adminRoleB' }] },
      { key: 'tech', email: emails.tech, name: 'Tech', password: PASSWORD, partnerMembership: { partner: 'partner', role: 'techRole', orgAccess: 'all' } },
      { key: 'techA', email: emails.techA, name: 'Tech A', password: PASSWORD, partnerMembership: { partner: 'partner', role: 'techRole', orgAccess: 'selected', organizations: ['orgA'] } },
    ],
  };
}
