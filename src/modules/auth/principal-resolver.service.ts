import { Injectable } from '@nestjs/common';
import { ANONYMOUS, Principal } from '../../common/principal';
import { TenantTransaction } from '../../infra/database/tenant-transaction.service';
import { tokenHash } from '../../infra/crypto/secret-box.service';
import { PrincipalRepository } from './principal.repository';
import { TokenService } from './token.service';

/** Turns a bearer credential into a principal. Returns null when the credential is not valid now. */
@Injectable()
export class PrincipalResolver {
  constructor(
    private readonly tokens: TokenService,
    private readonly repo: PrincipalRepository,
    private readonly tx: TenantTransaction,
  ) {}

  async fromBearer(bearer: string): Promise<Principal | null> {
    if (bearer.startsWith('sk_')) return this.fromApiKey(bearer);
    const claims = await this.tokens.verifyAccess(bearer);
    if (!claims) return null;
    // System context: the caller's tenants are what we are about to find out.
    return this.tx.withSystemContext('resolve the caller of a request', async () => {
      const session = await this.repo.activeSession(claims.sid);
      if (!session || session.user_id !== claims.sub || session.user_status !== 'active') return null;
      const base: Principal = { ...ANONYMOUS, kind: 'user', userId: session.user_id, sessionId: session.id, scope: session.scope, mfa: session.mfa };
      if (session.scope === 'organization' && session.org_id) {
        const grant = await this.repo.organizationGrant(session.user_id, session.org_id);
        if (!grant) return null;
        return { ...base, orgId: session.org_id, partnerId: grant.partner_id, orgIds: grant.org_ids, permissions: grant.permissions, allowedSiteIds: grant.site_ids };
      }
      if (session.scope === 'partner' && session.partner_id) {
        const grant = await this.repo.partnerGrant(session.user_id, session.partner_id);
        if (!grant) return null;
        return {
          ...base,
          partnerId: session.partner_id,
          partnerIds: [session.partner_id],
          orgIds: grant.org_ids,
          permissions: grant.permissions,
          allowedSiteIds: grant.site_ids,
        };
      }
      return null;
    });
  }

  private fromApiKey(key: string): Promise<Principal | null> {
    return this.tx.withSystemContext('resolve an API key', async () => {
      const row = await this.repo.apiKey(tokenHash(key));
      if (!row) return null;
      const base: Principal = { ...ANONYMOUS, kind: 'api_key', apiKeyId: row.id, permissions: row.permissions, mfa: row.mfa_satisfied };
      if (row.org_id) {
        const partnerId = await this.repo.orgPartner(row.org_id);
        if (!partnerId) return null;
        return { ...base, scope: 'organization', orgId: row.org_id, partnerId, orgIds: [row.org_id] };
      }
      const orgIds = await this.repo.partnerOrgIds(row.partner_id as string);
      return { ...base, scope: 'partner', partnerId: row.partner_id, partnerIds: [row.partner_id as string], orgIds };
    });
  }

  async fromAgentToken(token: string): Promise<Principal | null> {
    return this.tx.withSystemContext('resolve an agent token to its device', async () => {
      const row = await this.repo.agent(tokenHash(token));
      if (!row) return null;
      const partnerId = await this.repo.orgPartner(row.org_id);
      if (!partnerId) return null;
      return {
        ...ANONYMOUS,
        kind: 'agent',
        scope: 'organization',
        orgId: row.org_id,
        partnerId,
        orgIds: [row.org_id],
        agent: { agentId: row.agent_id, deviceId: row.device_id, orgId: row.org_id, siteId: row.site_id },
      };
    });
  }
}
