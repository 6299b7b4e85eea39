import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';
import type { SqlFilter } from './scim-filter';

export interface ScimUserRow {
  id: string;
  /** The account's sign-in email. */
  email: string;
  /** The connection's own userName for the person (the sign-in email until the connection sets one). */
  user_name: string;
  /** The connection's display name for the person (the account's name until the connection sets one). */
  name: string;
  given_name: string | null;
  family_name: string | null;
  user_status: string;
  external_id: string | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface ConnectionScope {
  connectionId: string;
  orgId: string | null;
  partnerId: string | null;
}

/**
 * The users a connection governs: the organization's members (organization connection) or the
 * partner's technicians (partner connection), with the connection's externalId. `active` is the
 * membership's state (a deprovisioned membership is suspended). Built with fixed SQL text; a
 * filter contributes only its parameterised expression over these column aliases.
 */
const UNIVERSE = (scope: ConnectionScope): string =>
  `SELECT u.id, u.email, coalesce(su.user_name, u.email) AS user_name, coalesce(su.display_name, u.name) AS name, su.given_name, su.family_name,
          u.status AS user_status, su.external_id, m.suspended_at IS NULL AS active, u.created_at, greatest(u.updated_at, su.updated_at) AS updated_at
     FROM ${scope.orgId ? 'organization_memberships' : 'partner_memberships'} m JOIN users u ON u.id = m.user_id
     LEFT JOIN scim_users su ON su.connection_id = $1 AND su.user_id = u.id
    WHERE m.${scope.orgId ? 'org_id' : 'partner_id'} = $2 AND su.deleted_at IS NULL`;

/**
 * The people a lookup can only be among, so that it reads them by index instead of the whole
 * organization (every POST of an IdP's sync is preceded by such a lookup): the ids whose userName,
 * sign-in email or externalId is the value. A superset: the lookup's own condition still applies.
 */
export type Candidates = { userName: string } | { email: string } | { externalId: string };

const CANDIDATE_IDS = (c: Candidates, n: number): string =>
  'userName' in c
    ? `x.id IN (SELECT su.user_id FROM scim_users su WHERE su.connection_id = $1 AND su.user_name IS NOT NULL AND su.user_name_lower = lower($${n}::text)
                UNION ALL SELECT u.id FROM users u WHERE u.email_lower = lower($${n}::text))`
    : 'email' in c
      ? `x.id IN (SELECT u.id FROM users u WHERE u.email_lower = lower($${n}::text))`
      : `x.id IN (SELECT su.user_id FROM scim_users su WHERE su.connection_id = $1 AND su.external_id = $${n})`;

const candidateValue = (c: Candidates): string => ('userName' in c ? c.userName : 'email' in c ? c.email : c.externalId);

/** What a connection keeps of a person apart from the account: null leaves a field as it is. */
export interface ScimProfile {
  userName?: string;
  displayName?: string;
  givenName?: string | null;
  familyName?: string | null;
}

@Injectable()
export class ScimUserRepository {
  constructor(private readonly db: DbService) {}

  private base(scope: ConnectionScope): unknown[] {
    return [scope.connectionId, scope.orgId ?? scope.partnerId];
  }

  async list(scope: ConnectionScope, filter: SqlFilter | null, offset: number, limit: number, candidates?: Candidates): Promise<{ total: number; rows: ScimUserRow[] }> {
    const params: unknown[] = [...this.base(scope), ...(filter?.params ?? [])];
    const conditions = filter ? [filter.sql] : [];
    if (candidates) {
      params.push(candidateValue(candidates));
      conditions.push(CANDIDATE_IDS(candidates, params.length));
    }
    const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
    const n = params.length;
    const rows = await this.db.rows<ScimUserRow & { total: string }>(
      `SELECT *, count(*) OVER () AS total FROM (${UNIVERSE(scope)}) x ${where} ORDER BY created_at, id OFFSET $${n + 1} LIMIT $${n + 2}`,
      [...params, offset, limit],
    );
    let total = rows.length ? Number(rows[0].total) : 0;
    if (!rows.length && (offset > 0 || limit === 0)) total = Number((await this.db.one<{ c: string }>(`SELECT count(*) AS c FROM (${UNIVERSE(scope)}) x ${where}`, params))?.c ?? 0);
    return { total, rows };
  }

  get(scope: ConnectionScope, userId: string): Promise<ScimUserRow | null> {
    return this.db.one(`SELECT * FROM (${UNIVERSE(scope)}) x WHERE id = $3`, [...this.base(scope), userId]);
  }

  byEmailInScope(scope: ConnectionScope, email: string): Promise<ScimUserRow | null> {
    return this.db.one(`SELECT * FROM (${UNIVERSE(scope)}) x WHERE lower(email) = lower($3) AND ${CANDIDATE_IDS({ email }, 3)}`, [...this.base(scope), email]);
  }

  /** Another person of the connection answers to this userName (its own, or their email while it has none). */
  userNameTaken(scope: ConnectionScope, userName: string, exceptUserId: string | null): Promise<boolean> {
    return this.db
      .one(`SELECT 1 FROM (${UNIVERSE(scope)}) x WHERE lower(user_name) = lower($3) AND ($4::uuid IS NULL OR id <> $4) AND ${CANDIDATE_IDS({ userName }, 3)}`, [
        ...this.base(scope),
        userName,
        exceptUserId,
      ])
      .then((r) => r !== null);
  }

  /** The connection's own attributes of a person (the link must exist). */
  saveProfile(scope: ConnectionScope, userId: string, profile: ScimProfile): Promise<number> {
    const columns: [string, unknown][] = [
      ['user_name', profile.userName],
      ['display_name', profile.displayName],
      ['given_name', profile.givenName],
      ['family_name', profile.familyName],
    ].filter(([, v]) => v !== undefined) as [string, unknown][];
    if (!columns.length) return Promise.resolve(0);
    return this.db.exec(
      `UPDATE scim_users SET ${columns.map(([c], i) => `${c} = $${i + 3}`).join(', ')}, updated_at = now() WHERE connection_id = $1 AND user_id = $2`,
      [scope.connectionId, userId, ...columns.map(([, v]) => v)],
    );
  }

  domainVerified(orgId: string, domain: string): Promise<boolean> {
    return this.db.one(`SELECT 1 FROM sso_verified_domains WHERE org_id = $1 AND domain = $2 AND verified`, [orgId, domain]).then((r) => r !== null);
  }

  /** Runs in system context: the account is not visible to the organization yet. */
  userIdByEmail(email: string): Promise<{ id: string; status: string } | null> {
    return this.db.one(`SELECT id, status FROM users WHERE email_lower = lower($1::text)`, [email]);
  }

  link(scope: ConnectionScope, userId: string, externalId: string | null | undefined): Promise<number> {
    return this.db.exec(
      `INSERT INTO scim_users (connection_id, org_id, partner_id, user_id, external_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (connection_id, user_id) DO UPDATE SET external_id = CASE WHEN $6 THEN EXCLUDED.external_id ELSE scim_users.external_id END, deleted_at = NULL, updated_at = now()`,
      [scope.connectionId, scope.orgId, scope.orgId ? null : scope.partnerId, userId, externalId ?? null, externalId !== undefined],
    );
  }

  /**
   * RFC 7644 §3.6: the connection keeps its record of a deleted person but answers 404 for it, leaves
   * it out of every query and of uniqueness; what it kept of its own (externalId, userName, names) goes.
   */
  markDeleted(scope: ConnectionScope, userId: string): Promise<number> {
    return this.db.exec(
      `INSERT INTO scim_users (connection_id, org_id, partner_id, user_id, deleted_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (connection_id, user_id) DO UPDATE
         SET deleted_at = now(), external_id = NULL, user_name = NULL, display_name = NULL, given_name = NULL, family_name = NULL, updated_at = now()`,
      [scope.connectionId, scope.orgId, scope.orgId ? null : scope.partnerId, userId],
    );
  }

  /** Which of these ids are people of the connection. */
  async existing(scope: ConnectionScope, userIds: string[]): Promise<string[]> {
    // The memberships themselves, not the people's rows: a push names up to thousands of ids.
    const rows = scope.orgId
      ? await this.db.rows<{ id: string }>(
          `SELECT m.user_id AS id FROM organization_memberships m LEFT JOIN scim_users su ON su.connection_id = $1 AND su.user_id = m.user_id
            WHERE m.org_id = $2 AND m.user_id = ANY ($3::uuid[]) AND su.deleted_at IS NULL`,
          [...this.base(scope), userIds],
        )
      : await this.db.rows<{ id: string }>(
          `SELECT m.user_id AS id FROM partner_memberships m LEFT JOIN scim_users su ON su.connection_id = $1 AND su.user_id = m.user_id
            WHERE m.partner_id = $2 AND m.user_id = ANY ($3::uuid[]) AND su.deleted_at IS NULL`,
          [...this.base(scope), userIds],
        );
    return rows.map((r) => r.id);
  }

  /** Links the people to the connection where they are not yet, and adds them to the group; the ids newly added. */
  async addGroupMembers(scope: ConnectionScope, groupId: string, userIds: string[]): Promise<string[]> {
    const owner = [scope.connectionId, scope.orgId, scope.orgId ? null : scope.partnerId, userIds];
    await this.db.exec(
      `INSERT INTO scim_users (connection_id, org_id, partner_id, user_id) SELECT $1, $2, $3, u FROM unnest($4::uuid[]) u ON CONFLICT (connection_id, user_id) DO NOTHING`,
      owner,
    );
    const added = await this.db.rows<{ user_id: string }>(
      `INSERT INTO scim_group_members (group_id, connection_id, org_id, partner_id, user_id) SELECT $5, $1, $2, $3, u FROM unnest($4::uuid[]) u
       ON CONFLICT DO NOTHING RETURNING user_id`,
      [...owner, groupId],
    );
    return added.map((r) => r.user_id);
  }

  /** Whether any group-to-role mapping is saved on the connection (without one, group changes change no role). */
  async hasMappings(scope: ConnectionScope): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM group_role_mappings WHERE connection_id = $1 LIMIT 1`, [scope.connectionId])) !== null;
  }

  /** A member this connection deleted (and so no longer shows): a POST of their address restores them. */
  deletedMemberByEmail(scope: ConnectionScope, email: string): Promise<{ id: string } | null> {
    return this.db.one(
      `SELECT u.id FROM users u JOIN scim_users su ON su.connection_id = $1 AND su.user_id = u.id
        WHERE u.email_lower = lower($2::text) AND su.deleted_at IS NOT NULL`,
      [scope.connectionId, email],
    );
  }

  emailTakenByOther(userId: string, email: string): Promise<boolean> {
    return this.db.one(`SELECT 1 FROM users WHERE email_lower = lower($1::text) AND id <> $2`, [email, userId]).then((r) => r !== null);
  }

  deprovision(scope: ConnectionScope, userId: string, reason: string): Promise<DeprovisionCounts | null> {
    return this.db
      .one<{ r: DeprovisionCounts }>(`SELECT scim_deprovision_user($1, $2, $3, $4) AS r`, [userId, scope.orgId, scope.orgId ? null : scope.partnerId, reason])
      .then((row) => row?.r ?? null);
  }
}

export interface DeprovisionCounts {
  sessionIds: string[];
  sessionsRevoked: number;
  apiKeysRevoked: number;
  pendingRequestsRevoked: number;
  elevationsRevoked: number;
  revokeCommandsQueued: number;
}
