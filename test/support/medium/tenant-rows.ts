import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';

/**
 * Fixture rows of the medium tier, written through the owner connection (no services, no password
 * hashing: a file arranges its tenants in a few milliseconds). Two partners, so that every
 * repository can be checked against a tenant that is not the caller's:
 *
 * - partner P with organization A (sites A1 and A2, a device and an agent on each) and
 *   organization A2nd (site X1, a device), an administrator of A, a member of A restricted to
 *   site A1, a reader of A (no devices:execute) and a technician of P reaching every organization;
 * - partner Q with organization B (site B1, a device and an agent) and an administrator of B.
 *
 * Names carry a random label, so files running at the same time on the run's database never meet.
 */
export interface TenantRows {
  label: string;
  partnerP: string;
  partnerQ: string;
  orgA: string;
  orgA2: string;
  orgB: string;
  siteA1: string;
  siteA2: string;
  siteX1: string;
  siteB1: string;
  deviceA1: string;
  deviceA2: string;
  deviceX1: string;
  deviceB1: string;
  agentA1: { id: string; token: string };
  agentA2: { id: string; token: string };
  agentB1: { id: string; token: string };
  roleAdminA: string;
  roleReaderA: string;
  roleAdminB: string;
  roleTech: string;
  adminA: string;
  siteUserA1: string;
  readerA: string;
  tech: string;
  adminB: string;
  emails: Record<'adminA' | 'siteUserA1' | 'readerA' | 'tech' | 'adminB', string>;
}

export async function seedTenants(owner: Client): Promise<TenantRows> {
  const label = randomBytes(4).toString('hex');
  const id = (): string => randomUUID();
  const agent = () => ({ id: id(), token: `agent-${label}-${randomBytes(8).toString('hex')}` });
  const t: TenantRows = {
    label,
    partnerP: id(),
    partnerQ: id(),
    orgA: id(),
    orgA2: id(),
    orgB: id(),
    siteA1: id(),
    siteA2: id(),
    siteX1: id(),
    siteB1: id(),
    deviceA1: id(),
    deviceA2: id(),
    deviceX1: id(),
    deviceB1: id(),
    agentA1: agent(),
    agentA2: agent(),
    agentB1: agent(),
    roleAdminA: id(),
    roleReaderA: id(),
    roleAdminB: id(),
    roleTech: id(),
    adminA: id(),
    siteUserA1: id(),
    readerA: id(),
    tech: id(),
    adminB: id(),
    emails: {
      adminA: `admin-a@${label}.example`,
      siteUserA1: `site-a1@${label}.example`,
      readerA: `reader-a@${label}.example`,
      tech: `tech@${label}.example`,
      adminB: `admin-b@${label}.example`,
    },
  };
  await owner.query(`INSERT INTO partners (id, name) VALUES ($1, 'Partner P ' || $3), ($2, 'Partner Q ' || $3)`, [t.partnerP, t.partnerQ, label]);
  await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'Org A ' || $6), ($3, $2, 'Org A2nd ' || $6), ($4, $5, 'Org B ' || $6)`, [
    t.orgA,
    t.partnerP,
    t.orgA2,
    t.orgB,
    t.partnerQ,
    label,
  ]);
  await owner.query(`INSERT INTO sites (id, org_id, name) VALUES ($1, $2, 'A1'), ($3, $2, 'A2'), ($4, $5, 'X1'), ($6, $7, 'B1')`, [
    t.siteA1,
    t.orgA,
    t.siteA2,
    t.siteX1,
    t.orgA2,
    t.siteB1,
    t.orgB,
  ]);
  await owner.query(
    `INSERT INTO devices (id, org_id, site_id, hostname) VALUES
       ($1, $2, $3, 'WS-A1-' || $12), ($4, $2, $5, 'WS-A2-' || $12), ($6, $7, $8, 'WS-X1-' || $12), ($9, $10, $11, 'WS-B1-' || $12)`,
    [t.deviceA1, t.orgA, t.siteA1, t.deviceA2, t.siteA2, t.deviceX1, t.orgA2, t.siteX1, t.deviceB1, t.orgB, t.siteB1, label],
  );
  await owner.query(`INSERT INTO agents (id, org_id, device_id, token_hash) VALUES ($1, $2, $3, $4), ($5, $2, $6, $7), ($8, $9, $10, $11)`, [
    t.agentA1.id,
    t.orgA,
    t.deviceA1,
    tokenHash(t.agentA1.token),
    t.agentA2.id,
    t.deviceA2,
    tokenHash(t.agentA2.token),
    t.agentB1.id,
    t.orgB,
    t.deviceB1,
    tokenHash(t.agentB1.token),
  ]);
  await owner.query(
    `INSERT INTO roles (id, scope, org_id, partner_id, name, permissions) VALUES
       ($1, 'organization', $2, NULL, 'Admin', '{*}'), ($3, 'organization', $2, NULL, 'Reader', '{devices:read,audit:read}'),
       ($4, 'organization', $5, NULL, 'Admin', '{*}'), ($6, 'partner', NULL, $7, 'Technician', '{*}')`,
    [t.roleAdminA, t.orgA, t.roleReaderA, t.roleAdminB, t.orgB, t.roleTech, t.partnerP],
  );
  await owner.query(
    `INSERT INTO users (id, email, name) VALUES ($1, $6, 'Admin A'), ($2, $7, 'Site A1'), ($3, $8, 'Reader A'), ($4, $9, 'Tech'), ($5, $10, 'Admin B')`,
    [t.adminA, t.siteUserA1, t.readerA, t.tech, t.adminB, t.emails.adminA, t.emails.siteUserA1, t.emails.readerA, t.emails.tech, t.emails.adminB],
  );
  await owner.query(
    `INSERT INTO organization_memberships (org_id, user_id, role_id, site_restricted) VALUES
       ($1, $2, $3, false), ($1, $4, $3, true), ($1, $5, $6, false), ($7, $8, $9, false)`,
    [t.orgA, t.adminA, t.roleAdminA, t.siteUserA1, t.readerA, t.roleReaderA, t.orgB, t.adminB, t.roleAdminB],
  );
  await owner.query(`INSERT INTO organization_membership_sites (org_id, user_id, site_id) VALUES ($1, $2, $3)`, [t.orgA, t.siteUserA1, t.siteA1]);
  await owner.query(`INSERT INTO partner_memberships (partner_id, user_id, role_id, org_access) VALUES ($1, $2, $3, 'all')`, [t.partnerP, t.tech, t.roleTech]);
  return t;
}

export interface RequestRow {
  orgId: string;
  siteId: string;
  deviceId: string;
  status?: 'pending' | 'approved' | 'auto_approved' | 'denied' | 'expired' | 'revoked' | 'actuating';
  flowType?: 'uac_intercept' | 'tech_jit_admin' | 'ai_tool_action';
  /**
   * Minutes before now (default 0; fractions allowed). Keep a pending request that must stay
   * pending under two minutes old: other files of the run sweep expired requests in system context,
   * some with a two-minute TTL.
   */
  minutesAgo?: number;
  /** An exact request time instead (rows that tie on it). */
  requestedAt?: Date;
  /** Minutes from now until the elevation ends (approved, auto_approved, actuating; default 30). */
  expiresInMinutes?: number;
  subjectUsername?: string;
  subjectUserId?: string | null;
  path?: string;
}

/** An unredeemed SSO sign-in code of a session (owner connection), valid for a minute. */
export async function insertExchangeCode(owner: Client, orgId: string, userId: string, sessionId: string): Promise<void> {
  await owner.query(
    `INSERT INTO sso_exchange_codes (org_id, code_hash, session_id, user_id, tokens, expires_at) VALUES ($1, $2, $3, $4, 'sealed', now() + interval '1 minute')`,
    [orgId, randomBytes(32).toString('hex'), sessionId, userId],
  );
}

/** Stores an elevation request as history (owner connection) and returns its id. */
export async function insertRequest(owner: Client, r: RequestRow): Promise<string> {
  const status = r.status ?? 'pending';
  const inForce = status === 'approved' || status === 'auto_approved' || status === 'actuating';
  const { rows } = await owner.query<{ id: string }>(
    `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, subject_username, subject_user_id, target_executable_path,
                                     target_executable_hash, requested_at, expires_at, actuated_at)
     VALUES ($1, $2, $3, $4, $5::text, $6, $7, $8, repeat('ab', 32), coalesce($11::timestamptz, now() - make_interval(secs => $9::float8 * 60)),
             CASE WHEN $10::int IS NULL THEN NULL ELSE now() + make_interval(mins => $10::int) END,
             CASE WHEN $5::text = 'actuating' THEN now() END)
     RETURNING id`,
    [
      r.orgId,
      r.siteId,
      r.deviceId,
      r.flowType ?? 'uac_intercept',
      status,
      r.subjectUsername ?? 'CORP\\alice',
      r.subjectUserId ?? null,
      r.path ?? 'C:\\Tools\\setup.exe',
      r.minutesAgo ?? 0,
      inForce ? (r.expiresInMinutes ?? 30) : null,
      r.requestedAt ?? null,
    ],
  );
  return rows[0].id;
}

/**
 * Cancels the pending pushes of this file's tenants. The outbox is shared by every file of the run,
 * and the e2e files' push workers claim the oldest due pushes of every organization in batches: pushes
 * left due here would take places in their batches and answers scripted for their own phones.
 */
export async function withdrawPushes(owner: Client, t: TenantRows): Promise<void> {
  await owner.query(`UPDATE push_outbox SET status = 'cancelled' WHERE org_id = ANY ($1::uuid[]) AND status = 'pending'`, [[t.orgA, t.orgA2, t.orgB]]);
}
