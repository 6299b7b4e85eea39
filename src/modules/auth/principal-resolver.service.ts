import { Gatherer } from '../../common/gatherer';
import { PrincipalCache } from '../../common/principal-cache';
import { PrincipalSource } from '../../common/principal-source';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { ANONYMOUS, hasPermission, Principal } from '../../common/principal';
import { TenantTransactionService } from '../../infra/database/tenant-transaction.service';
import { PgListener } from '../../infra/database/pg-listener.service';
import { tokenHash } from '../../infra/crypto/secret-box.service';
import { notCovered } from '../../common/permission-set.util';
import { AgentRow, ApiKeyPrincipalRow, GrantRow, PrincipalRepository } from './principal.repository';
import { TokenService } from './token.service';
import { ScimConnectionLookup } from './scim-connection-lookup';

const CACHE_MAX_ENTRIES = 10_000;
/** The most agent tokens one lookup statement asks for. */
export const AGENT_LOOKUP_BATCH = 500;


/** The channel the database announces changes to callers on (migration 1763702400000): `<kind>:<id>`. */
export const PRINCIPAL_CHANGES_CHANNEL = 'principal_changes';

/**
 * Turns a bearer credential into a principal. Returns null when the credential is not valid now.
 *
 * Resolved principals are reused for PRINCIPAL_CACHE_TTL_MS (2 s by default). A change that
 * affects a caller (a revoked session, key, SCIM token or agent; a membership, an account's status,
 * a role's permissions) is announced by the database when it commits, on every instance alike
 * (PRINCIPAL_CHANGES_CHANNEL): the entries it touches are dropped at once. The TTL bounds what a
 * lost announcement costs; while the listening connection is down nothing is announced, and on its
 * return the whole cache is dropped. The access token itself lives 15 minutes.
 */
@Injectable()
export class PrincipalResolverService implements PrincipalSource, PrincipalCache, OnModuleInit {
  /** The least recently used callers beyond CACHE_MAX_ENTRIES are dropped; an entry older than the TTL is never answered. */
  private readonly cache: LRUCache<string, { principal: Principal | null }>;
  /**
   * Bumped by every forget: a lookup that started before a revocation committed must not put what
   * it read into the cache after the revocation dropped it (it would outlive the revocation by a TTL).
   */
  private epoch = 0;
  /** Agent tokens not found in the cache, gathered (common/gatherer.ts): those arriving in one turn of the event loop are looked up in one statement. */
  private readonly agentLookups = new Gatherer<string, AgentRow | null>((hashes) => this.lookUpAgents(hashes), AGENT_LOOKUP_BATCH);

  constructor(
    private readonly tokens: TokenService,
    private readonly repo: PrincipalRepository,
    private readonly tx: TenantTransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly scimConnections: ScimConnectionLookup,
    private readonly listener: PgListener,
  ) {
    this.cache = new LRUCache({ max: CACHE_MAX_ENTRIES, ttl: Math.max(config.principalCacheTtlMs, 1) });
  }

  onModuleInit(): void {
    this.listener.on(PRINCIPAL_CHANGES_CHANNEL, (payload) => this.changed(payload));
    // Announcements made while the connection was down are lost: forget everything they could have named.
    this.listener.onConnected(() => this.forgetAll());
  }

  /** A change announced by the database (on this instance's commit or another's). */
  private changed(payload: string): void {
    const at = payload.indexOf(':');
    const kind = payload.slice(0, at);
    const id = payload.slice(at + 1);
    if (kind === 'u') this.forgetUser(id);
    else if (kind === 's') this.forgetSession(id);
    else if (kind === 'k') this.forgetWhere((p) => p.apiKeyId === id);
    else if (kind === 'c') this.forgetScimConnection(id);
    else if (kind === 'a') this.forgetWhere((p) => p.agent?.agentId === id);
    else this.forgetAll();
  }

  private forgetWhere(match: (p: Principal) => boolean): void {
    this.epoch++;
    for (const [key, entry] of this.cache.entries()) if (entry.principal && match(entry.principal)) this.cache.delete(key);
  }

  forgetSession(sessionId: string): void {
    this.epoch++;
    this.cache.delete(`s:${sessionId}`);
  }

  /** Every credential acting for this person: their sessions and the API keys they created. */
  forgetUser(userId: string): void {
    this.epoch++;
    for (const [key, entry] of this.cache.entries()) if (entry.principal?.userId === userId) this.cache.delete(key);
  }

  /** After a change that may touch many callers at once (a role's permissions). */
  forgetAll(): void {
    this.epoch++;
    this.cache.clear();
  }

  async fromBearer(bearer: string): Promise<Principal | null> {
    if (bearer.startsWith('sk_')) return this.cached(`k:${tokenHash(bearer)}`, () => this.fromApiKey(bearer));
    const claims = await this.tokens.verifyAccess(bearer);
    if (!claims) return null;
    const principal = await this.cached(`s:${claims.sid}`, () => this.fromSession(claims.sid));
    return principal && principal.userId === claims.sub ? principal : null;
  }

  /** A SCIM connection's token (`scim_…`); only the SCIM routes accept it. */
  async fromScimToken(token: string): Promise<Principal | null> {
    if (!token.startsWith('scim_')) return null;
    return this.cached(`c:${tokenHash(token)}`, () => this.fromScimConnection(token));
  }

  /** After a SCIM connection's token is rotated or revoked. */
  forgetScimConnection(connectionId: string): void {
    this.epoch++;
    for (const [key, entry] of this.cache.entries()) if (entry.principal?.scimConnectionId === connectionId) this.cache.delete(key);
  }

  async fromAgentToken(token: string): Promise<Principal | null> {
    return this.cached(`a:${tokenHash(token)}`, () => this.loadAgent(token));
  }

  private async cached(key: string, load: () => Promise<Principal | null>): Promise<Principal | null> {
    if (this.config.principalCacheTtlMs <= 0) return load();
    const hit = this.cache.get(key);
    if (hit) return hit.principal;
    const epoch = this.epoch;
    const principal = await load();
    if (epoch !== this.epoch) return principal;
    this.cache.set(key, { principal });
    return principal;
  }

  private fromSession(sid: string): Promise<Principal | null> {
    // System context: the caller's tenants are what we are about to find out.
    return this.tx.withSystemLookup('resolve the caller of a request', async () => {
      const session = await this.repo.activeSession(sid);
      if (!session || session.user_status !== 'active') return null;
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
          partnerWide: grant.partner_wide === true,
        };
      }
      return null;
    });
  }

  /**
   * A key acts for the person who created it: it works only while that person is active and
   * still holds, in the key's organization or partner, every permission the key carries, and it
   * reaches no site the person cannot. A partner-wide key needs its creator to still reach every
   * organization. The principal carries the creator as userId, so separation-of-duties checks
   * and "who decided" fields name the person, whichever credential was used.
   */
  private fromApiKey(key: string): Promise<Principal | null> {
    return this.tx.withSystemLookup('resolve an API key and the person it acts for', async () => {
      const row = await this.repo.apiKey(tokenHash(key));
      if (!row || !row.created_by || row.creator_status !== 'active') return null;
      const base: Principal = {
        ...ANONYMOUS,
        kind: 'api_key',
        userId: row.created_by,
        apiKeyId: row.id,
        permissions: row.permissions,
        mfa: row.mfa_satisfied && row.creator_mfa_enrolled === true,
      };
      if (row.org_id) {
        const grant = await this.creatorGrantInOrganization(row, row.org_id);
        if (!grant) return null;
        return { ...base, scope: 'organization', orgId: row.org_id, partnerId: grant.partner_id, orgIds: [row.org_id], allowedSiteIds: grant.site_ids };
      }
      const partnerId = row.partner_id as string;
      const grant = await this.repo.partnerGrant(row.created_by, partnerId);
      if (!grant || grant.partner_wide !== true || notCovered(grant.permissions, row.permissions).length) return null;
      return { ...base, scope: 'partner', partnerId, partnerIds: [partnerId], orgIds: grant.org_ids, allowedSiteIds: grant.site_ids, partnerWide: true };
    });
  }

  /** The creator's grant in the key's organization (as a technician of its partner, or as a member) that covers the key. */
  private async creatorGrantInOrganization(row: ApiKeyPrincipalRow, orgId: string): Promise<GrantRow | null> {
    const userId = row.created_by as string;
    const partnerId = await this.repo.orgPartner(orgId);
    if (!partnerId) return null;
    const covers = (g: GrantRow | null): g is GrantRow => !!g && notCovered(g.permissions, row.permissions).length === 0;
    const technician = await this.repo.partnerGrant(userId, partnerId);
    if (technician?.org_ids.includes(orgId) && covers(technician)) return { ...technician, partner_id: partnerId };
    const member = await this.repo.organizationGrant(userId, orgId);
    return covers(member) ? member : null;
  }

  /**
   * A SCIM connection acts with the authority of the administrator who created it or last rotated
   * its token: it works only while that person is active and still holds organizations:write in
   * the connection's organization (as a member or a technician reaching it) or, for a partner
   * connection, reaches every organization of the partner with organizations:write. The principal
   * carries their permissions and sites, as they are now: every person the token changes must be
   * within that authority (PersonAuthorityService), and default roles and group mappings are
   * re-checked against it.
   */
  private fromScimConnection(token: string): Promise<Principal | null> {
    return this.tx.withSystemContext('resolve a SCIM connection and the administrator it acts for', async () => {
      const row = await this.scimConnections.byTokenHash(tokenHash(token));
      if (!row || !row.acting_user_id || row.acting_user_status !== 'active') return null;
      const base: Principal = { ...ANONYMOUS, kind: 'scim', userId: row.acting_user_id, scimConnectionId: row.id, mfa: false };
      const write = (g: GrantRow | null): g is GrantRow => !!g && hasPermission(g.permissions, 'organizations:write');
      if (row.org_id) {
        const partnerId = await this.repo.orgPartner(row.org_id);
        if (!partnerId) return null;
        const technician = await this.repo.partnerGrant(row.acting_user_id, partnerId);
        const grant = technician?.org_ids.includes(row.org_id) && write(technician) ? { ...technician, partner_id: partnerId } : await this.repo.organizationGrant(row.acting_user_id, row.org_id);
        if (!write(grant)) return null;
        return { ...base, scope: 'organization', orgId: row.org_id, partnerId: grant.partner_id, orgIds: [row.org_id], permissions: grant.permissions, allowedSiteIds: grant.site_ids };
      }
      const partnerId = row.partner_id as string;
      const grant = await this.repo.partnerGrant(row.acting_user_id, partnerId);
      if (!write(grant) || grant.partner_wide !== true) return null;
      return { ...base, scope: 'partner', partnerId, partnerIds: [partnerId], orgIds: grant.org_ids, permissions: grant.permissions, allowedSiteIds: grant.site_ids, partnerWide: true };
    });
  }

  /**
   * An agent token's principal. Lookups are gathered until the event loop has read what arrived
   * with them, and answered in one statement per
   * AGENT_LOOKUP_BATCH tokens: after a restart a whole fleet reconnects within seconds, each agent
   * missing the cache, and one statement for hundreds of them costs little more than one for one.
   * It runs in system context of its own, outside any request's transaction: the guard resolves
   * the caller before a request opens one. A caller that is already inside a transaction looks its
   * agent up alone, in it.
   */
  private async loadAgent(token: string): Promise<Principal | null> {
    const hash = tokenHash(token);
    if (this.tx.inTransaction()) return this.tx.withSystemLookup('resolve agent tokens to their devices', async () => agentPrincipal(await this.repo.agent(hash)));
    return agentPrincipal(await this.agentLookups.call(hash));
  }

  private async lookUpAgents(hashes: string[]): Promise<(AgentRow | null)[]> {
    const rows = await this.tx.withSystemLookup('resolve agent tokens to their devices', () => this.repo.agents([...new Set(hashes)]));
    const found = new Map(rows.map((r) => [r.token_hash, r]));
    return hashes.map((hash) => found.get(hash) ?? null);
  }
}

function agentPrincipal(row: AgentRow | null): Principal | null {
  if (!row) return null;
  return {
    ...ANONYMOUS,
    kind: 'agent',
    scope: 'organization',
    orgId: row.org_id,
    partnerId: row.partner_id,
    orgIds: [row.org_id],
    agent: { agentId: row.agent_id, deviceId: row.device_id, orgId: row.org_id, siteId: row.site_id },
  };
}
