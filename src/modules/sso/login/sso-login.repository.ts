import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import type { AttributeMapping, SsoProviderStatus, SsoProviderType } from '../providers/sso-provider.types';
import type { SamlProviderColumns } from '../saml/saml-provider.util';

/** The provider columns the sign-in flows read. */
export interface LoginProviderRow {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  name: string;
  type: SsoProviderType;
  status: SsoProviderStatus;
  issuer: string | null;
  client_id: string | null;
  client_secret: string | null;
  authorization_url: string | null;
  token_url: string | null;
  userinfo_url: string | null;
  jwks_url: string | null;
  scopes: string | null;
  attribute_mapping: AttributeMapping;
  auto_provision: boolean;
  default_role_id: string | null;
  default_role_set_by: string | null;
  allowed_domains: string | null;
  enforce_sso: boolean;
  trusts_idp_mfa: boolean;
  generation: number;
  created_at: Date;
  created_by: string | null;
  /** The administrator who last configured the provider (any change bumps the generation). */
  updated_by: string | null;
}

export type ProviderOwner = { orgId: string; partnerId?: undefined } | { partnerId: string; orgId?: undefined };

export interface LoginSessionRow {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  provider_id: string;
  state: string;
  nonce: string;
  code_verifier: string;
  redirect_url: string;
  generation: number;
  purpose: 'login' | 'link';
  link_user_id: string | null;
  link_session_id: string | null;
  /** RFC 9207: the provider advertised `iss` in authorization responses when the round trip started. */
  iss_required: boolean;
}

/** A consumed login session and its provider as it is now (null: deleted since the start). */
export interface ConsumedLoginSession {
  session: LoginSessionRow;
  provider: LoginProviderRow | null;
}

export interface NewLoginSession {
  orgId: string | null;
  partnerId: string | null;
  providerId: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUrl: string;
  generation: number;
  purpose: 'login' | 'link';
  linkUserId: string | null;
  linkSessionId: string | null;
  issRequired: boolean;
  ttlSeconds: number;
}

export interface LoginUserRow {
  id: string;
  email: string;
  status: string;
  /** Whether the account can sign in with a password (an SSO-provisioned account has none). */
  has_password: boolean;
}

/**
 * An account as a tenant knows it: whether the tenant sees it at all (a member of it, or of its
 * partner or one of its organizations), whether it is the tenant's own member, and whether that
 * membership is suspended (SCIM deprovisioning: it stays, but signs nobody in).
 */
export interface TenantAccountRow extends LoginUserRow {
  visible: boolean;
  member: boolean;
  suspended: boolean;
}

/** A user, and everything they may do in an organization now (none when suspended or not a member). */
export interface OrganizationGrantRow extends LoginUserRow {
  permissions: string[];
}

/** A sign-in's first look at its tenant and the IdP subject (SsoLoginRepository.subjectIn). */
export interface SubjectInTenant {
  /** The provider's organization and its partner, or its partner, are active. */
  tenantActive: boolean;
  /** The identity the subject is linked by at the provider. */
  identity: { id: string; user_id: string } | null;
  /** The linked account (or, where asked, the account of the address when none is linked) as the tenant knows it. */
  account: TenantAccountRow | null;
}

export interface IdentityUpsert {
  orgId: string | null;
  partnerId: string | null;
  userId: string;
  providerId: string;
  externalId: string;
  email: string;
  profile: Record<string, unknown>;
  /** Null when the protocol issues no tokens (SAML). */
  accessTokenSealed: string | null;
  refreshTokenSealed: string | null;
  tokenExpiresAt: Date | null;
}

export interface ExchangeCodeRow {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  session_id: string;
  user_id: string;
  tokens: string;
  fresh: boolean;
  /** The session the code would hand over is live (sessionActive), read in the same statement. */
  session_live: boolean;
  age_seconds: number;
}

const PROVIDER_COLUMN_NAMES = [
  'id', 'org_id', 'partner_id', 'name', 'type', 'status', 'issuer', 'client_id', 'client_secret', 'authorization_url', 'token_url',
  'userinfo_url', 'jwks_url', 'scopes', 'attribute_mapping', 'auto_provision', 'default_role_id', 'default_role_set_by', 'allowed_domains',
  'enforce_sso', 'trusts_idp_mfa', 'generation', 'created_at', 'created_by', 'updated_by',
] as const;

const PROVIDER_COLUMNS = PROVIDER_COLUMN_NAMES.join(', ');


const USER_COLUMNS = 'u.id, u.email, u.status, u.password_hash IS NOT NULL AS has_password';

/** `$1` the organization; the user is `u`. */
const ORGANIZATION_STANDING = `${USER_COLUMNS}, m.user_id IS NOT NULL AS member, m.suspended_at IS NOT NULL AS suspended,
  m.user_id IS NOT NULL OR EXISTS (SELECT 1 FROM partner_memberships pm JOIN organizations o ON o.partner_id = pm.partner_id
                                    WHERE o.id = $1 AND pm.user_id = u.id) AS visible
  FROM users u LEFT JOIN organization_memberships m ON m.org_id = $1 AND m.user_id = u.id`;

/** `$1` the partner; the user is `u`. */
const PARTNER_STANDING = `${USER_COLUMNS}, pm.user_id IS NOT NULL AS member, pm.suspended_at IS NOT NULL AS suspended,
  pm.user_id IS NOT NULL OR EXISTS (SELECT 1 FROM organization_memberships m JOIN organizations o ON o.id = m.org_id
                                     WHERE o.partner_id = $1 AND m.user_id = u.id) AS visible
  FROM users u LEFT JOIN partner_memberships pm ON pm.partner_id = $1 AND pm.user_id = u.id`;

const SESSION_COLUMN_NAMES = [
  'id', 'org_id', 'partner_id', 'provider_id', 'state', 'nonce', 'code_verifier', 'redirect_url', 'generation', 'purpose', 'link_user_id', 'link_session_id',
  'iss_required',
] as const;

const SESSION_COLUMNS = SESSION_COLUMN_NAMES.join(', ');

/**
 * Two rows' columns side by side in one result row, each aliased with its record's name (`session.id`,
 * `provider.id`): no column of one can be read as the other's, whatever either table gains, and each
 * record is rebuilt from its own list of names (`recordOf`).
 */
const aliased = (alias: string, record: string, names: readonly string[]): string => names.map((c) => `${alias}.${c} AS "${record}.${c}"`).join(', ');
const recordOf = (row: Record<string, unknown>, record: string, names: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(names.map((c) => [c, row[`${record}.${c}`]]));

const CONSUMED_SESSION_COLUMNS = aliased('s', 'session', SESSION_COLUMN_NAMES);
const CONSUMED_PROVIDER_COLUMNS = aliased('p', 'provider', PROVIDER_COLUMN_NAMES);

/** The SAML columns of sso_providers (SamlProviderColumns), read with the provider by the SAML start. */
const SAML_COLUMN_NAMES = ['entity_id', 'sso_url', 'certificate', 'name_id_format', 'force_authn'] as const;

const PROVIDER_AND_SAML_COLUMNS = `${CONSUMED_PROVIDER_COLUMNS}, ${aliased('p', 'saml', SAML_COLUMN_NAMES)}`;

/**
 * Tables of the sign-in flows. Public routes have no tenant yet, so callers run these in a
 * named system context; the link routes run them in the signed-in user's context where noted.
 */
@Injectable()
export class SsoLoginRepository {
  constructor(private readonly db: DbService) {}

  /** Spec 1.1.3 and 1.6.3: the oldest active provider by creation time, ties by id, of an active tenant. */
  oldestActiveProvider(owner: ProviderOwner): Promise<LoginProviderRow | null> {
    return this.oldestActive<LoginProviderRow>(owner, PROVIDER_COLUMNS);
  }

  /**
   * The oldest active provider with its SAML columns (null for an OIDC provider), in one statement:
   * what the SAML start reads, as a one-message lookup.
   */
  async oldestActiveProviderWithSaml(owner: ProviderOwner): Promise<{ provider: LoginProviderRow; saml: SamlProviderColumns | null } | null> {
    const row = await this.oldestActive<Record<string, unknown>>(owner, PROVIDER_AND_SAML_COLUMNS);
    if (!row) return null;
    const provider = recordOf(row, 'provider', PROVIDER_COLUMN_NAMES) as unknown as LoginProviderRow;
    return { provider, saml: provider.type === 'saml' ? (recordOf(row, 'saml', SAML_COLUMN_NAMES) as unknown as SamlProviderColumns) : null };
  }

  /** `columns` of the oldest active provider of `owner` (`p`). */
  private oldestActive<T>(owner: ProviderOwner, columns: string): Promise<T | null> {
    return owner.orgId
      ? this.db.one<T>(
          `SELECT ${columns} FROM sso_providers p
            WHERE p.org_id = $1 AND p.status = 'active'
              AND EXISTS (SELECT 1 FROM organizations o JOIN partners pa ON pa.id = o.partner_id
                           WHERE o.id = p.org_id AND o.status = 'active' AND pa.status = 'active')
            ORDER BY p.created_at, p.id LIMIT 1`,
          [owner.orgId],
        )
      : this.db.one<T>(
          `SELECT ${columns} FROM sso_providers p
            WHERE p.partner_id = $1 AND p.status = 'active'
              AND EXISTS (SELECT 1 FROM partners pa WHERE pa.id = p.partner_id AND pa.status = 'active')
            ORDER BY p.created_at, p.id LIMIT 1`,
          [owner.partnerId],
        );
  }

  /** The partner of a deployment that has exactly one; null with none or several. */
  async onlyPartner(): Promise<string | null> {
    const rows = await this.db.rows<{ id: string }>(`SELECT id FROM partners LIMIT 2`);
    return rows.length === 1 ? rows[0].id : null;
  }

  /** FOR SHARE in the final sign-in transaction: a concurrent reconfiguration waits until the sign-in commits. */
  provider(id: string, opts: { forShare?: boolean } = {}): Promise<LoginProviderRow | null> {
    return this.db.one<LoginProviderRow>(`SELECT ${PROVIDER_COLUMNS} FROM sso_providers WHERE id = $1${opts.forShare ? ' FOR SHARE' : ''}`, [id]);
  }

  /** Active providers of one owner that a user may link an identity with (OIDC only). */
  linkableProviders(owner: ProviderOwner): Promise<LoginProviderRow[]> {
    return owner.orgId
      ? this.db.rows<LoginProviderRow>(`SELECT ${PROVIDER_COLUMNS} FROM sso_providers WHERE org_id = $1 AND status = 'active' AND type = 'oidc' ORDER BY created_at, id`, [owner.orgId])
      : this.db.rows<LoginProviderRow>(`SELECT ${PROVIDER_COLUMNS} FROM sso_providers WHERE partner_id = $1 AND status = 'active' AND type = 'oidc' ORDER BY created_at, id`, [owner.partnerId]);
  }

  async insertLoginSession(s: NewLoginSession): Promise<void> {
    await this.db.exec(
      `INSERT INTO sso_sessions (org_id, partner_id, provider_id, state, nonce, code_verifier, redirect_url, generation, purpose, link_user_id, link_session_id, iss_required, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now() + make_interval(secs => $13))`,
      [s.orgId, s.partnerId, s.providerId, s.state, s.nonce, s.codeVerifier, s.redirectUrl, s.generation, s.purpose, s.linkUserId, s.linkSessionId, s.issRequired, s.ttlSeconds],
    );
  }

  /** Removes a bounded batch of login sessions that expired over an hour ago (abandoned sign-ins). */
  async sweepExpiredLoginSessions(): Promise<void> {
    await this.db.exec(
      `DELETE FROM sso_sessions WHERE id IN (SELECT id FROM sso_sessions WHERE expires_at < now() - interval '1 hour' LIMIT 100)`,
    );
  }

  /** Which tenant a state belongs to, without consuming it (to attribute the audit row of a refused callback). */
  peekLoginSession(state: string): Promise<Pick<LoginSessionRow, 'org_id' | 'partner_id' | 'provider_id' | 'purpose'> | null> {
    return this.db.one(`SELECT org_id, partner_id, provider_id, purpose FROM sso_sessions WHERE state = $1`, [state]);
  }

  /**
   * Spec 1.1.7 and 3.2: the one statement that makes a state single-use, answering with the
   * provider the session was started under, read in the same statement.
   */
  async consumeLoginSession(state: string): Promise<ConsumedLoginSession | null> {
    const row = await this.db.one<Record<string, unknown>>(
      `WITH s AS (DELETE FROM sso_sessions WHERE state = $1 AND expires_at > now() RETURNING ${SESSION_COLUMNS})
       SELECT ${CONSUMED_SESSION_COLUMNS}, ${CONSUMED_PROVIDER_COLUMNS} FROM s LEFT JOIN sso_providers p ON p.id = s.provider_id`,
      [state],
    );
    if (!row) return null;
    return {
      session: recordOf(row, 'session', SESSION_COLUMN_NAMES) as unknown as LoginSessionRow,
      provider: row['provider.id'] === null ? null : (recordOf(row, 'provider', PROVIDER_COLUMN_NAMES) as unknown as LoginProviderRow),
    };
  }

  /** Deletes an expired row for the state; null when there was none (never issued, or already used). */
  discardExpiredLoginSession(state: string): Promise<LoginSessionRow | null> {
    return this.db.one<LoginSessionRow>(`DELETE FROM sso_sessions WHERE state = $1 RETURNING ${SESSION_COLUMNS}`, [state]);
  }

  identityBySubject(providerId: string, externalId: string): Promise<{ id: string; user_id: string } | null> {
    return this.db.one(`SELECT id, user_id FROM user_sso_identities WHERE provider_id = $1 AND external_id = $2`, [providerId, externalId]);
  }

  /** The user's identity at this provider under another subject, if any. */
  otherIdentityOfUser(userId: string, providerId: string, externalId: string): Promise<{ id: string } | null> {
    return this.db.one(`SELECT id FROM user_sso_identities WHERE user_id = $1 AND provider_id = $2 AND external_id <> $3 LIMIT 1`, [userId, providerId, externalId]);
  }

  identitiesOfUser(userId: string): Promise<{ provider_id: string; email: string | null; last_login_at: Date | null }[]> {
    return this.db.rows(`SELECT provider_id, email, last_login_at FROM user_sso_identities WHERE user_id = $1`, [userId]);
  }

  userById(id: string): Promise<LoginUserRow | null> {
    return this.db.one<LoginUserRow>(`SELECT id, email, status, password_hash IS NOT NULL AS has_password FROM users WHERE id = $1`, [id]);
  }

  /**
   * The first statement of account resolution: whether the provider's tenant is active, the
   * identity the IdP subject is linked by, and its account as the tenant knows it. For a partner
   * provider, with no identity linked, the account is the one holding `email` (partner sign-ins
   * match by address without provisioning); for an organization provider the address is looked up
   * only when needed (accountInOrganization), after the checks that may refuse first.
   */
  async subjectIn(owner: ProviderOwner, providerId: string, subject: string, email: string): Promise<SubjectInTenant> {
    const row = owner.orgId
      ? await this.db.one<{ tenant_active: boolean; identity_id: string | null; identity_user_id: string | null; account: TenantAccountRow | null }>(
          `SELECT EXISTS (SELECT 1 FROM organizations o JOIN partners p ON p.id = o.partner_id
                           WHERE o.id = $1 AND o.status = 'active' AND p.status = 'active') AS tenant_active,
                  i.id AS identity_id, i.user_id AS identity_user_id,
                  (SELECT to_jsonb(a) FROM (SELECT ${ORGANIZATION_STANDING} WHERE u.id = i.user_id) a) AS account
             FROM (SELECT 1) one LEFT JOIN user_sso_identities i ON i.provider_id = $2 AND i.external_id = $3`,
          [owner.orgId, providerId, subject],
        )
      : await this.db.one<{ tenant_active: boolean; identity_id: string | null; identity_user_id: string | null; account: TenantAccountRow | null }>(
          `SELECT EXISTS (SELECT 1 FROM partners p WHERE p.id = $1 AND p.status = 'active') AS tenant_active,
                  i.id AS identity_id, i.user_id AS identity_user_id,
                  CASE WHEN i.id IS NOT NULL THEN (SELECT to_jsonb(a) FROM (SELECT ${PARTNER_STANDING} WHERE u.id = i.user_id) a)
                       ELSE (SELECT to_jsonb(a) FROM (SELECT ${PARTNER_STANDING} WHERE lower(u.email) = lower($4)) a) END AS account
             FROM (SELECT 1) one LEFT JOIN user_sso_identities i ON i.provider_id = $2 AND i.external_id = $3`,
          [owner.partnerId, providerId, subject, email],
        );
    return {
      tenantActive: row!.tenant_active,
      identity: row!.identity_id ? { id: row!.identity_id, user_id: row!.identity_user_id! } : null,
      account: row!.account,
    };
  }

  /**
   * The account holding this address, as the organization knows it, in one statement: it sees
   * the user when they are its member or a technician of its partner (whatever their
   * organization reach).
   */
  accountInOrganization(orgId: string, email: string): Promise<TenantAccountRow | null> {
    return this.db.one<TenantAccountRow>(`SELECT ${ORGANIZATION_STANDING} WHERE lower(u.email) = lower($2)`, [orgId, email]);
  }

  async deleteIdentity(id: string): Promise<void> {
    await this.db.exec(`DELETE FROM user_sso_identities WHERE id = $1`, [id]);
  }

  /** Every link of the user at one provider (links left from a time the provider's tenant still saw the user). */
  async deleteIdentitiesAt(providerId: string, userId: string): Promise<void> {
    await this.db.exec(`DELETE FROM user_sso_identities WHERE provider_id = $1 AND user_id = $2`, [providerId, userId]);
  }

  async isOrganizationMember(orgId: string, userId: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [orgId, userId])) !== null;
  }

  async isPartnerMember(partnerId: string, userId: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM partner_memberships WHERE partner_id = $1 AND user_id = $2`, [partnerId, userId])) !== null;
  }

  /** Spec 1.2.2: the organization proved it owns the domain through DNS. */
  async domainVerifiedFor(orgId: string, domain: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM sso_verified_domains WHERE org_id = $1 AND domain = $2 AND verified`, [orgId, domain])) !== null;
  }

  organizationRole(orgId: string, roleId: string): Promise<{ id: string; permissions: string[] } | null> {
    return this.db.one(`SELECT id, permissions FROM roles WHERE org_id = $1 AND id = $2 AND scope = 'organization'`, [orgId, roleId]);
  }

  /**
   * The users with these ids (those that exist), each with everything they may do in the
   * organization now, in one statement: their own membership's role, and the role of a technician
   * of the organization's partner who can reach it. A suspended membership grants nothing.
   */
  grantsInOrganization(orgId: string, userIds: string[]): Promise<OrganizationGrantRow[]> {
    return this.db.rows<OrganizationGrantRow>(
      `WITH grants AS (
         SELECT m.user_id, r.permissions FROM organization_memberships m JOIN roles r ON r.org_id = m.org_id AND r.id = m.role_id
          WHERE m.user_id = ANY ($2::uuid[]) AND m.org_id = $1 AND m.suspended_at IS NULL
         UNION ALL
         SELECT pm.user_id, r.permissions FROM partner_memberships pm
           JOIN roles r ON r.partner_id = pm.partner_id AND r.id = pm.role_id
           JOIN organizations o ON o.partner_id = pm.partner_id AND o.id = $1
           JOIN partners pa ON pa.id = pm.partner_id AND pa.status = 'active'
          WHERE pm.user_id = ANY ($2::uuid[]) AND pm.suspended_at IS NULL
            AND (pm.org_access = 'all' OR EXISTS (SELECT 1 FROM partner_membership_orgs x
                                                    WHERE x.partner_id = pm.partner_id AND x.user_id = pm.user_id AND x.org_id = $1))
       )
       SELECT ${USER_COLUMNS},
              coalesce((SELECT array_agg(p) FROM grants g CROSS JOIN LATERAL unnest(g.permissions) p WHERE g.user_id = u.id), '{}') AS permissions
         FROM users u WHERE u.id = ANY ($2::uuid[])`,
      [orgId, userIds],
    );
  }

  /**
   * Creates or refreshes the identity link (spec 2.5: updated on every login). Returns null,
   * changing nothing, when the IdP subject is already linked to another user.
   */
  async upsertIdentity(i: IdentityUpsert): Promise<{ id: string; inserted: boolean } | null> {
    return this.db.one(
      `INSERT INTO user_sso_identities (org_id, partner_id, user_id, provider_id, external_id, email, profile, access_token, refresh_token, token_expires_at, last_login_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
       ON CONFLICT (provider_id, external_id) DO UPDATE
         SET email = EXCLUDED.email, profile = EXCLUDED.profile, access_token = EXCLUDED.access_token,
             refresh_token = coalesce(EXCLUDED.refresh_token, user_sso_identities.refresh_token),
             token_expires_at = EXCLUDED.token_expires_at, last_login_at = now(), updated_at = now()
         WHERE user_sso_identities.user_id = EXCLUDED.user_id
       RETURNING id, (xmax = 0) AS inserted`,
      [i.orgId, i.partnerId, i.userId, i.providerId, i.externalId, i.email, JSON.stringify(i.profile), i.accessTokenSealed, i.refreshTokenSealed, i.tokenExpiresAt],
    );
  }

  /** A user relinking with another account of the same IdP replaces the previous link. */
  async removeOtherIdentities(userId: string, providerId: string, keepExternalId: string): Promise<number> {
    return this.db.exec(`DELETE FROM user_sso_identities WHERE user_id = $1 AND provider_id = $2 AND external_id <> $3`, [userId, providerId, keepExternalId]);
  }

  async sessionActive(sessionId: string, userId: string): Promise<boolean> {
    const row = await this.db.one(
      `SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id AND u.status = 'active'
        WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.expires_at > now()`,
      [sessionId, userId],
    );
    return row !== null;
  }

  async insertExchangeCode(c: { orgId: string | null; partnerId: string | null; codeHash: string; sessionId: string; userId: string; tokensSealed: string; ttlSeconds: number }): Promise<void> {
    await this.db.exec(
      `INSERT INTO sso_exchange_codes (org_id, partner_id, code_hash, session_id, user_id, tokens, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
      [c.orgId, c.partnerId, c.codeHash, c.sessionId, c.userId, c.tokensSealed, c.ttlSeconds],
    );
  }

  async sweepExpiredExchangeCodes(): Promise<void> {
    await this.db.exec(`DELETE FROM sso_exchange_codes WHERE id IN (SELECT id FROM sso_exchange_codes WHERE expires_at < now() LIMIT 100)`);
  }

  /**
   * Spec 3.3: one DELETE … RETURNING, so of two concurrent redemptions exactly one gets the row;
   * whether its session is still live (as sessionActive) comes with it.
   */
  consumeExchangeCode(codeHash: string): Promise<ExchangeCodeRow | null> {
    return this.db.one<ExchangeCodeRow>(
      `WITH c AS (
         DELETE FROM sso_exchange_codes WHERE code_hash = $1
         RETURNING id, org_id, partner_id, session_id, user_id, tokens, expires_at > now() AS fresh,
                   extract(epoch FROM now() - created_at)::float8 AS age_seconds
       )
       SELECT c.id, c.org_id, c.partner_id, c.session_id, c.user_id, c.tokens, c.fresh, c.age_seconds,
              EXISTS (SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id AND u.status = 'active'
                       WHERE s.id = c.session_id AND s.user_id = c.user_id AND s.revoked_at IS NULL AND s.expires_at > now()) AS session_live
         FROM c`,
      [codeHash],
    );
  }
}
