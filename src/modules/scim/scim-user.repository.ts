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
/** What a person of the connection is as a SCIM resource, from `m` (membership), `u` (account) and `su` (the connection's row). */
const ROW_COLUMNS = `u.id, u.email, coalesce(su.user_name, u.email) AS user_name, coalesce(su.display_name, u.name) AS name, su.given_name, su.family_name,
          u.status AS user_status, su.external_id, m.suspended_at IS NULL AS active, u.created_at, greatest(u.updated_at, su.updated_at) AS updated_at`;

const MEMBERSHIPS = (scope: ConnectionScope): string => (scope.orgId ? 'organization_memberships' : 'partner_memberships');
const MEMBERSHIP_TENANT = (scope: ConnectionScope): string => (scope.orgId ? 'org_id' : 'partner_id');

const UNIVERSE = (scope: ConnectionScope): string =>
  `SELECT ${ROW_COLUMNS}
     FROM ${MEMBERSHIPS(scope)} m JOIN users u ON u.id = m.user_id
     LEFT JOIN scim_users su ON su.connection_id = $1 AND su.user_id = u.id
    WHERE m.${MEMBERSHIP_TENANT(scope)} = $2 AND su.deleted_at IS NULL`;

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

/** Each profile field with its column. */
const PROFILE_FIELDS = [
  ['userName', 'user_name'],
  ['displayName', 'display_name'],
  ['givenName', 'given_name'],
  ['familyName', 'family_name'],
] as const;

/** The columns of the profile fields that are given (undefined leaves a field as it is stored). */
const givenColumns = (profile: ScimProfile): string[] => PROFILE_FIELDS.filter(([field]) => profile[field] !== undefined).map(([, column]) => column);

export interface ProvisioningFacts {
  taken: boolean;
  deletedId: string | null;
  defaultRoleId: string | null;
  /** Null when the default role is not a role of the connection's organization. */
  defaultRolePermissions: string[] | null;
  /**
   * Whether the acting administrator may grant the default role on every site of the organization:
   * the rule of acting on a person (the database's app_may_grant, the one PersonAuthorityService
   * asks), asked in this statement so that a POST costs no round trip of its own for it.
   */
  mayGrantDefaultRole: boolean;
  domainVerified: boolean;
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
    // One statement whatever the page. The total comes with the rows; a page that may be empty while
    // people exist (past the first, or count=0) reads it on a row of its own, joined to the page.
    const found =
      offset === 0 && limit > 0
        ? await this.db.rows<ScimUserRow & { total: string }>(
            `SELECT *, count(*) OVER () AS total FROM (${UNIVERSE(scope)}) x ${where} ORDER BY created_at, id OFFSET $${n + 1} LIMIT $${n + 2}`,
            [...params, offset, limit],
          )
        : await this.db.rows<ScimUserRow & { total: string }>(
            `SELECT c.total, x.* FROM (SELECT count(*) AS total FROM (${UNIVERSE(scope)}) x ${where}) c
               LEFT JOIN LATERAL (SELECT * FROM (${UNIVERSE(scope)}) x ${where} ORDER BY created_at, id OFFSET $${n + 1} LIMIT $${n + 2}) x ON true`,
            [...params, offset, limit],
          );
    return { total: found.length ? Number(found[0].total) : 0, rows: found.filter((r) => r.id !== null) };
  }

  get(scope: ConnectionScope, userId: string): Promise<ScimUserRow | null> {
    return this.db.one(`SELECT * FROM (${UNIVERSE(scope)}) x WHERE id = $3`, [...this.base(scope), userId]);
  }

  /**
   * What a POST /Users must know before it creates anyone, read in one statement: whether the
   * address or the userName already answers for a person of the connection, the member this
   * connection deleted under that address (a POST restores them), the connection's default role
   * with its permissions, and whether `domain` is a verified domain of the connection's organization.
   */
  async provisioningFacts(scope: ConnectionScope, actorId: string | null, email: string, userName: string, domain: string): Promise<ProvisioningFacts> {
    const row = await this.db.one<ProvisioningFacts>(
      // One row whatever is found: the connection's own row is joined, not required.
      // One scan of the connection's people, over the few candidates read by index: planning each
      // scan of them (row-level security on four tables) costs more than running it.
      `SELECT EXISTS (SELECT 1 FROM (${UNIVERSE(scope)}) x
                       WHERE (lower(x.email) = lower($3::text) OR lower(x.user_name) = lower($4::text))
                         AND x.id IN (SELECT su.user_id FROM scim_users su WHERE su.connection_id = $1 AND su.user_name IS NOT NULL AND su.user_name_lower = lower($4::text)
                                      UNION ALL SELECT u.id FROM users u WHERE u.email_lower IN (lower($3::text), lower($4::text)))) AS taken,
              (SELECT u.id FROM users u JOIN scim_users su ON su.connection_id = $1 AND su.user_id = u.id
                WHERE u.email_lower = lower($3::text) AND su.deleted_at IS NOT NULL LIMIT 1) AS "deletedId",
              c.default_role_id AS "defaultRoleId", r.permissions AS "defaultRolePermissions",
              CASE WHEN r.permissions IS NULL OR $6::uuid IS NULL THEN false
                   ELSE app_may_grant($6::uuid, c.org_id, NULL, r.permissions, NULL) IS TRUE END AS "mayGrantDefaultRole",
              EXISTS (SELECT 1 FROM sso_verified_domains d WHERE d.org_id = c.org_id AND d.domain = $5 AND d.verified) AS "domainVerified"
         FROM (SELECT 1) one LEFT JOIN scim_connections c ON c.id = $1 LEFT JOIN roles r ON r.id = c.default_role_id AND r.org_id = c.org_id`,
      [...this.base(scope), email, userName, domain, actorId],
    );
    return row!;
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
    const given = givenColumns(profile);
    if (!given.length) return Promise.resolve(0);
    return this.db.exec(
      `UPDATE scim_users SET
         user_name = CASE WHEN 'user_name' = ANY ($7::text[]) THEN $3 ELSE user_name END,
         display_name = CASE WHEN 'display_name' = ANY ($7::text[]) THEN $4 ELSE display_name END,
         given_name = CASE WHEN 'given_name' = ANY ($7::text[]) THEN $5 ELSE given_name END,
         family_name = CASE WHEN 'family_name' = ANY ($7::text[]) THEN $6 ELSE family_name END,
         updated_at = now()
       WHERE connection_id = $1 AND user_id = $2`,
      [scope.connectionId, userId, profile.userName ?? null, profile.displayName ?? null, profile.givenName ?? null, profile.familyName ?? null, given],
    );
  }

  /** Runs in system context: the account is not visible to the organization yet. */
  userIdByEmail(email: string): Promise<{ id: string; status: string } | null> {
    return this.db.one(`SELECT id, status FROM users WHERE email_lower = lower($1::text)`, [email]);
  }

  /**
   * Links the person to the connection (again, after a delete), with the connection's own attributes
   * in the same statement: `externalId` and each profile field undefined leave what is stored.
   * Answers the person as the connection now sees them (what get() would read after it), so that
   * a POST needs no second read; null when they hold no membership in the connection's tenant.
   */
  link(scope: ConnectionScope, userId: string, externalId: string | null | undefined, profile: ScimProfile = {}): Promise<ScimUserRow | null> {
    const given = givenColumns(profile);
    return this.db.one<ScimUserRow>(
      `WITH su AS (
         INSERT INTO scim_users (connection_id, org_id, partner_id, user_id, external_id, user_name, display_name, given_name, family_name)
         VALUES ($1, $2, $3, $4, $5, $7, $8, $9, $10)
         ON CONFLICT (connection_id, user_id) DO UPDATE SET
           external_id = CASE WHEN $6 THEN EXCLUDED.external_id ELSE scim_users.external_id END,
           user_name = CASE WHEN 'user_name' = ANY ($11::text[]) THEN EXCLUDED.user_name ELSE scim_users.user_name END,
           display_name = CASE WHEN 'display_name' = ANY ($11::text[]) THEN EXCLUDED.display_name ELSE scim_users.display_name END,
           given_name = CASE WHEN 'given_name' = ANY ($11::text[]) THEN EXCLUDED.given_name ELSE scim_users.given_name END,
           family_name = CASE WHEN 'family_name' = ANY ($11::text[]) THEN EXCLUDED.family_name ELSE scim_users.family_name END,
           deleted_at = NULL, updated_at = now()
         RETURNING *
       )
       SELECT ${ROW_COLUMNS}
         FROM su JOIN users u ON u.id = su.user_id JOIN ${MEMBERSHIPS(scope)} m ON m.user_id = su.user_id AND m.${MEMBERSHIP_TENANT(scope)} = $12`,
      [
        scope.connectionId,
        scope.orgId,
        scope.orgId ? null : scope.partnerId,
        userId,
        externalId ?? null,
        externalId !== undefined,
        profile.userName ?? null,
        profile.displayName ?? null,
        profile.givenName ?? null,
        profile.familyName ?? null,
        given,
        scope.orgId ?? scope.partnerId,
      ],
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

  /** Whether the connection has its own row for the person (deleted or not). */
  async isLinked(scope: ConnectionScope, userId: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM scim_users WHERE connection_id = $1 AND user_id = $2`, [scope.connectionId, userId])) !== null;
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

  emailTakenByOther(userId: string, email: string): Promise<boolean> {
    return this.db.one(`SELECT 1 FROM users WHERE email_lower = lower($1::text) AND id <> $2`, [email, userId]).then((r) => r !== null);
  }
}
