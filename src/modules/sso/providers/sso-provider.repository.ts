import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';
import { AttributeMapping, SsoOwner, SsoProviderConfig, SsoProviderRecord, SsoProviderStatus, SsoProviderType } from './sso-provider.types';

interface SsoProviderRow {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  name: string;
  type: SsoProviderType;
  status: SsoProviderStatus;
  preset: string | null;
  issuer: string | null;
  client_id: string | null;
  client_secret: string | null;
  authorization_url: string | null;
  token_url: string | null;
  userinfo_url: string | null;
  jwks_url: string | null;
  scopes: string | null;
  entity_id: string | null;
  sso_url: string | null;
  certificate: string | null;
  name_id_format: string | null;
  force_authn: boolean;
  attribute_mapping: AttributeMapping;
  auto_provision: boolean;
  default_role_id: string | null;
  default_role_set_by: string | null;
  allowed_domains: string | null;
  enforce_sso: boolean;
  trusts_idp_mfa: boolean;
  generation: number;
  created_by: string | null;
  updated_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** What an update may write: configuration, the sealed secret and who set the default role. */
export type ProviderPatch = Partial<SsoProviderConfig & { clientSecretSealed: string | null; defaultRoleSetBy: string | null }>;

export interface NewProvider extends SsoProviderConfig {
  id: string;
  orgId: string | null;
  partnerId: string | null;
  type: SsoProviderType;
  preset: string | null;
  clientSecretSealed: string | null;
  defaultRoleSetBy: string | null;
  createdBy: string | null;
}

export interface RoleRow {
  id: string;
  scope: 'organization' | 'partner';
  org_id: string | null;
  partner_id: string | null;
  permissions: string[];
}

/** API field → column, for every field an update may write. Column names never come from input. */
const COLUMNS: Record<keyof ProviderPatch, string> = {
  name: 'name',
  issuer: 'issuer',
  clientId: 'client_id',
  clientSecretSealed: 'client_secret',
  authorizationUrl: 'authorization_url',
  tokenUrl: 'token_url',
  userInfoUrl: 'userinfo_url',
  jwksUrl: 'jwks_url',
  scopes: 'scopes',
  entityId: 'entity_id',
  ssoUrl: 'sso_url',
  certificate: 'certificate',
  nameIdFormat: 'name_id_format',
  forceAuthn: 'force_authn',
  attributeMapping: 'attribute_mapping',
  autoProvision: 'auto_provision',
  defaultRoleId: 'default_role_id',
  defaultRoleSetBy: 'default_role_set_by',
  allowedDomains: 'allowed_domains',
  enforceSSO: 'enforce_sso',
  trustsIdpMfa: 'trusts_idp_mfa',
};

function toRecord(r: SsoProviderRow): SsoProviderRecord {
  return {
    id: r.id,
    orgId: r.org_id,
    partnerId: r.partner_id,
    name: r.name,
    type: r.type,
    status: r.status,
    preset: r.preset,
    issuer: r.issuer,
    clientId: r.client_id,
    clientSecretSealed: r.client_secret,
    authorizationUrl: r.authorization_url,
    tokenUrl: r.token_url,
    userInfoUrl: r.userinfo_url,
    jwksUrl: r.jwks_url,
    scopes: r.scopes,
    entityId: r.entity_id,
    ssoUrl: r.sso_url,
    certificate: r.certificate,
    nameIdFormat: r.name_id_format,
    forceAuthn: r.force_authn,
    attributeMapping: r.attribute_mapping,
    autoProvision: r.auto_provision,
    defaultRoleId: r.default_role_id,
    defaultRoleSetBy: r.default_role_set_by,
    allowedDomains: r.allowed_domains,
    enforceSSO: r.enforce_sso,
    trustsIdpMfa: r.trusts_idp_mfa,
    generation: r.generation,
    createdBy: r.created_by,
    updatedBy: r.updated_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function sqlValue(field: keyof ProviderPatch, value: unknown): unknown {
  return field === 'attributeMapping' ? JSON.stringify(value) : value;
}

/** Providers as the current transaction's row-level security lets it see them. */
@Injectable()
export class SsoProviderRepository {
  constructor(private readonly db: Db) {}

  async list(owner: SsoOwner): Promise<SsoProviderRecord[]> {
    const rows = owner.orgId
      ? await this.db.rows<SsoProviderRow>(`SELECT * FROM sso_providers WHERE org_id = $1 ORDER BY created_at, id`, [owner.orgId])
      : await this.db.rows<SsoProviderRow>(`SELECT * FROM sso_providers WHERE partner_id = $1 ORDER BY created_at, id`, [owner.partnerId]);
    return rows.map(toRecord);
  }

  async find(id: string, opts: { forUpdate?: boolean } = {}): Promise<SsoProviderRecord | null> {
    const row = await this.db.one<SsoProviderRow>(`SELECT * FROM sso_providers WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id]);
    return row ? toRecord(row) : null;
  }

  /** Spec 1.1.3 and 1.6.3: the oldest active provider by creation time, ties broken by id. */
  async oldestActive(owner: SsoOwner): Promise<SsoProviderRecord | null> {
    const row = owner.orgId
      ? await this.db.one<SsoProviderRow>(
          `SELECT * FROM sso_providers WHERE org_id = $1 AND status = 'active' ORDER BY created_at, id LIMIT 1`,
          [owner.orgId],
        )
      : await this.db.one<SsoProviderRow>(
          `SELECT * FROM sso_providers WHERE partner_id = $1 AND status = 'active' ORDER BY created_at, id LIMIT 1`,
          [owner.partnerId],
        );
    return row ? toRecord(row) : null;
  }

  async generationOf(id: string): Promise<{ generation: number; status: SsoProviderStatus } | null> {
    return this.db.one(`SELECT generation, status FROM sso_providers WHERE id = $1`, [id]);
  }

  async insert(p: NewProvider): Promise<SsoProviderRecord> {
    const row = await this.db.one<SsoProviderRow>(
      `INSERT INTO sso_providers (id, org_id, partner_id, name, type, preset, issuer, client_id, client_secret,
          authorization_url, token_url, userinfo_url, jwks_url, scopes, entity_id, sso_url, certificate, name_id_format,
          force_authn, attribute_mapping, auto_provision, default_role_id, default_role_set_by, allowed_domains,
          enforce_sso, trusts_idp_mfa, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20::jsonb, $21, $22, $23,
               $24, $25, $26, $27, $27)
       RETURNING *`,
      [
        p.id, p.orgId, p.partnerId, p.name, p.type, p.preset, p.issuer, p.clientId, p.clientSecretSealed,
        p.authorizationUrl, p.tokenUrl, p.userInfoUrl, p.jwksUrl, p.scopes, p.entityId, p.ssoUrl, p.certificate, p.nameIdFormat,
        p.forceAuthn, JSON.stringify(p.attributeMapping), p.autoProvision, p.defaultRoleId, p.defaultRoleSetBy, p.allowedDomains,
        p.enforceSSO, p.trustsIdpMfa, p.createdBy,
      ],
    );
    return toRecord(row as SsoProviderRow);
  }

  /**
   * Writes `patch` and bumps the generation in the same statement, only if the provider is
   * still at `expectedGeneration` (compare-and-swap). Null when it is gone or changed.
   */
  async update(id: string, expectedGeneration: number, patch: ProviderPatch, updatedBy: string | null): Promise<SsoProviderRecord | null> {
    const fields = (Object.keys(patch) as (keyof ProviderPatch)[]).filter((field) => patch[field] !== undefined);
    const params: unknown[] = [id, expectedGeneration, updatedBy];
    const sets = fields.map((field) => {
      params.push(sqlValue(field, patch[field]));
      return `${COLUMNS[field]} = $${params.length}${field === 'attributeMapping' ? '::jsonb' : ''}`;
    });
    const row = await this.db.one<SsoProviderRow>(
      `UPDATE sso_providers SET ${[...sets, 'generation = generation + 1', 'updated_by = $3', 'updated_at = now()'].join(', ')}
        WHERE id = $1 AND generation = $2 RETURNING *`,
      params,
    );
    return row ? toRecord(row) : null;
  }

  async setStatus(id: string, status: SsoProviderStatus, updatedBy: string | null): Promise<SsoProviderRecord | null> {
    const row = await this.db.one<SsoProviderRow>(
      `UPDATE sso_providers SET status = $2, generation = generation + 1, updated_by = $3, updated_at = now() WHERE id = $1 RETURNING *`,
      [id, status, updatedBy],
    );
    return row ? toRecord(row) : null;
  }

  /**
   * Deletes the provider; its login sessions and identity links go with it through the
   * foreign keys' ON DELETE CASCADE, in this same statement. Returns what was removed.
   */
  async delete(id: string): Promise<{ record: SsoProviderRecord; identities: number } | null> {
    const row = await this.db.one<SsoProviderRow & { removed_identities: string }>(
      `WITH counts AS (SELECT count(*) AS removed_identities FROM user_sso_identities WHERE provider_id = $1),
            gone AS (DELETE FROM sso_providers WHERE id = $1 RETURNING *)
       SELECT gone.*, counts.removed_identities FROM gone, counts`,
      [id],
    );
    if (!row) return null;
    return { record: toRecord(row), identities: Number(row.removed_identities) };
  }

  /** Login round trips in flight for the provider. System context only: the table holds their PKCE verifiers. */
  async countLoginSessions(providerId: string): Promise<number> {
    const row = await this.db.one<{ n: string }>(`SELECT count(*) AS n FROM sso_sessions WHERE provider_id = $1`, [providerId]);
    return Number(row!.n);
  }

  /**
   * Ends every live session the provider minted, with its refresh tokens (expired now, so a
   * later refresh is simply invalid) and its unredeemed exchange codes, in the caller's
   * transaction. System context only: sessions are visible to their own user otherwise.
   * Returns the ended sessions.
   */
  async revokeMintedSessions(providerId: string, reason: string): Promise<{ id: string; user_id: string }[]> {
    return this.db.rows<{ id: string; user_id: string }>(
      `WITH ended AS (
         UPDATE sessions SET revoked_at = now(), revoked_reason = $2
          WHERE sso_provider_id = $1 AND revoked_at IS NULL AND expires_at > now()
         RETURNING id, user_id
       ), spent AS (
         UPDATE refresh_tokens SET expires_at = least(expires_at, now())
          WHERE session_id IN (SELECT id FROM ended) AND used_at IS NULL
       ), unredeemed AS (
         DELETE FROM sso_exchange_codes WHERE session_id IN (SELECT id FROM ended)
       )
       SELECT id, user_id FROM ended`,
      [providerId, reason],
    );
  }

  async organizationVisible(orgId: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM organizations WHERE id = $1`, [orgId])) !== null;
  }

  /** Active organization of an active partner (system context: any organization). */
  async organizationActive(orgId: string): Promise<boolean> {
    const row = await this.db.one(
      `SELECT 1 FROM organizations o JOIN partners p ON p.id = o.partner_id WHERE o.id = $1 AND o.status = 'active' AND p.status = 'active'`,
      [orgId],
    );
    return row !== null;
  }

  role(roleId: string): Promise<RoleRow | null> {
    return this.db.one<RoleRow>(`SELECT id, scope, org_id, partner_id, permissions FROM roles WHERE id = $1`, [roleId]);
  }
}
