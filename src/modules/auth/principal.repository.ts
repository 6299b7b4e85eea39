import { Injectable } from '@nestjs/common';
import { DbService, prepared } from '../../infra/database/db.service';

const PRINCIPAL_ACTIVE_SESSION = prepared(
  'principal_active_session',
  `SELECT s.id, s.user_id, s.scope, s.org_id, s.partner_id, s.mfa, u.status AS user_status
         FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
);

const PRINCIPAL_ORGANIZATION_GRANT = prepared(
  'principal_organization_grant',
  `SELECT r.permissions, ARRAY[m.org_id]::text[] AS org_ids, o.partner_id,
              CASE WHEN m.site_restricted THEN coalesce(
                (SELECT array_agg(ms.site_id::text) FROM organization_membership_sites ms WHERE ms.org_id = m.org_id AND ms.user_id = m.user_id),
                '{}') END AS site_ids
         FROM organization_memberships m
         JOIN roles r ON r.id = m.role_id
         JOIN organizations o ON o.id = m.org_id AND o.status = 'active'
         JOIN partners p ON p.id = o.partner_id AND p.status = 'active'
        WHERE m.user_id = $1 AND m.org_id = $2 AND m.suspended_at IS NULL`,
);

const PRINCIPAL_PARTNER_GRANT = prepared(
  'principal_partner_grant',
  `SELECT r.permissions, pm.partner_id, pm.org_access = 'all' AS partner_wide,
              CASE WHEN pm.org_access = 'all'
                THEN coalesce((SELECT array_agg(o.id::text) FROM organizations o WHERE o.partner_id = pm.partner_id AND o.status = 'active'), '{}')
                ELSE coalesce((SELECT array_agg(po.org_id::text) FROM partner_membership_orgs po JOIN organizations o ON o.id = po.org_id AND o.status = 'active'
                                WHERE po.partner_id = pm.partner_id AND po.user_id = pm.user_id), '{}') END AS org_ids,
              CASE WHEN pm.site_restricted THEN coalesce(
                (SELECT array_agg(ps.site_id::text) FROM partner_membership_sites ps WHERE ps.partner_id = pm.partner_id AND ps.user_id = pm.user_id),
                '{}') END AS site_ids
         FROM partner_memberships pm
         JOIN roles r ON r.id = pm.role_id
         JOIN partners p ON p.id = pm.partner_id AND p.status = 'active'
        WHERE pm.user_id = $1 AND pm.partner_id = $2 AND pm.suspended_at IS NULL`,
);

// The key with the state of the person it acts for: a key lives only as long as its creator.
const PRINCIPAL_API_KEY = prepared(
  'principal_api_key_with_creator',
  `WITH k AS (
     UPDATE api_keys SET last_used_at = now()
      WHERE key_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
      RETURNING id, org_id, partner_id, permissions, mfa_satisfied, created_by)
   SELECT k.id, k.org_id, k.partner_id, k.permissions, k.mfa_satisfied, k.created_by,
          u.status AS creator_status, u.totp_secret IS NOT NULL AS creator_mfa_enrolled
     FROM k LEFT JOIN users u ON u.id = k.created_by`,
);

const PRINCIPAL_ORG_PARTNER = prepared(
  'principal_org_partner',
  `SELECT o.partner_id FROM organizations o JOIN partners p ON p.id = o.partner_id AND p.status = 'active'
        WHERE o.id = $1 AND o.status = 'active'`,
);

const PRINCIPAL_AGENT = prepared(
  'principal_agent',
  `SELECT a.id AS agent_id, a.device_id, a.org_id, o.partner_id, d.site_id, d.status AS device_status
     FROM agents a
     JOIN devices d ON d.org_id = a.org_id AND d.id = a.device_id
     JOIN organizations o ON o.id = a.org_id AND o.status = 'active'
     JOIN partners p ON p.id = o.partner_id AND p.status = 'active'
    WHERE a.token_hash = $1 AND a.revoked_at IS NULL`,
);

/** PRINCIPAL_AGENT for many tokens at once (a fleet reconnecting): each row names the token it answers. */
const PRINCIPAL_AGENTS = prepared(
  'principal_agents',
  `SELECT a.token_hash, a.id AS agent_id, a.device_id, a.org_id, o.partner_id, d.site_id, d.status AS device_status
     FROM agents a
     JOIN devices d ON d.org_id = a.org_id AND d.id = a.device_id
     JOIN organizations o ON o.id = a.org_id AND o.status = 'active'
     JOIN partners p ON p.id = o.partner_id AND p.status = 'active'
    WHERE a.token_hash = ANY ($1::text[]) AND a.revoked_at IS NULL`,
);


export interface SessionRow {
  id: string;
  user_id: string;
  scope: 'organization' | 'partner' | 'system';
  org_id: string | null;
  partner_id: string | null;
  mfa: boolean;
  user_status: string;
}

export interface AgentRow {
  agent_id: string;
  device_id: string;
  org_id: string;
  partner_id: string;
  site_id: string;
  device_status: string;
}

export interface GrantRow {
  permissions: string[];
  org_ids: string[];
  site_ids: string[] | null;
  partner_id: string | null;
  /** Partner grants only: the membership reaches all organizations of the partner. */
  partner_wide?: boolean;
}

export interface ApiKeyPrincipalRow {
  id: string;
  org_id: string | null;
  partner_id: string | null;
  permissions: string[];
  mfa_satisfied: boolean;
  created_by: string | null;
  creator_status: string | null;
  creator_mfa_enrolled: boolean | null;
}

/**
 * Reads what the auth guard needs to build a principal. Every method here must be called inside
 * TenantTransactionService.withSystemContext: the caller is not known yet, so no tenant scope exists.
 */
@Injectable()
export class PrincipalRepository {
  constructor(private readonly db: DbService) {}

  async activeSession(sessionId: string): Promise<SessionRow | null> {
    const rows = await this.db.rows<SessionRow>(
      PRINCIPAL_ACTIVE_SESSION,
      [sessionId],
    );
    return rows[0] ?? null;
  }

  /** Grants of an organization member in one organization (active organization and partner only). */
  async organizationGrant(userId: string, orgId: string): Promise<GrantRow | null> {
    const rows = await this.db.rows<GrantRow>(
      PRINCIPAL_ORGANIZATION_GRANT,
      [userId, orgId],
    );
    return rows[0] ?? null;
  }

  /** Grants of a partner technician: the partner's organizations they may reach, and their sites. */
  async partnerGrant(userId: string, partnerId: string): Promise<GrantRow | null> {
    const rows = await this.db.rows<GrantRow>(
      PRINCIPAL_PARTNER_GRANT,
      [userId, partnerId],
    );
    return rows[0] ?? null;
  }

  async apiKey(keyHash: string): Promise<ApiKeyPrincipalRow | null> {
    return this.db.one(
      PRINCIPAL_API_KEY,
      [keyHash],
    );
  }

  async orgPartner(orgId: string): Promise<string | null> {
    const rows = await this.db.rows<{ partner_id: string }>(
      PRINCIPAL_ORG_PARTNER,
      [orgId],
    );
    return rows[0]?.partner_id ?? null;
  }

  /** The agent of a token, with its device, organization and partner (both active), in one statement: the agent routes are hot. */
  async agent(tokenHash: string): Promise<AgentRow | null> {
    return this.db.one(PRINCIPAL_AGENT, [tokenHash]);
  }

  /** agent() for many token hashes in one statement: the rows found, each with its token_hash (none for a token not valid now). */
  async agents(tokenHashes: string[]): Promise<(AgentRow & { token_hash: string })[]> {
    return this.db.rows(PRINCIPAL_AGENTS, [tokenHashes]);
  }
}
