import { Injectable } from '@nestjs/common';
import type { FindOptionsWhere, QueryDeepPartialEntity, Repository } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { RoleEntity } from '../../tenancy/roles/role.entity';
import { SsoProviderEntity } from './sso-provider.entity';
import { SsoOwner, SsoProviderConfig, SsoProviderRecord, SsoProviderStatus, SsoProviderType } from './sso-provider.types';

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

/** The fields an update may write; anything else a patch carries is not written. */
const PATCHABLE: readonly (keyof ProviderPatch)[] = [
  'name', 'issuer', 'clientId', 'clientSecretSealed', 'authorizationUrl', 'tokenUrl', 'userInfoUrl', 'jwksUrl', 'scopes', 'entityId', 'ssoUrl',
  'certificate', 'nameIdFormat', 'forceAuthn', 'attributeMapping', 'autoProvision', 'defaultRoleId', 'defaultRoleSetBy', 'allowedDomains',
  'enforceSSO', 'trustsIdpMfa',
];

const OLDEST_FIRST = { createdAt: 'ASC', id: 'ASC' } as const;

const ownedBy = (owner: SsoOwner): FindOptionsWhere<SsoProviderEntity> => (owner.orgId ? { orgId: owner.orgId } : { partnerId: owner.partnerId as string });

/**
 * Providers as the current transaction's row-level security lets it see them: the only writer of
 * sso_providers, through the request's transaction (DbService.repo). The sessions a provider minted and
 * its login round trips belong to other modules' tables and stay statements of their own here.
 */
@Injectable()
export class SsoProviderRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<SsoProviderEntity>> {
    return this.db.repo(SsoProviderEntity);
  }

  async list(owner: SsoOwner): Promise<SsoProviderRecord[]> {
    return (await this.repo()).find({ where: ownedBy(owner), order: OLDEST_FIRST });
  }

  async find(id: string, opts: { forUpdate?: boolean } = {}): Promise<SsoProviderRecord | null> {
    return (await this.repo()).findOne({ where: { id }, ...(opts.forUpdate ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
  }

  /** Spec 1.1.3 and 1.6.3: the oldest active provider by creation time, ties broken by id. */
  async oldestActive(owner: SsoOwner): Promise<SsoProviderRecord | null> {
    return (await this.repo()).findOne({ where: { ...ownedBy(owner), status: 'active' }, order: OLDEST_FIRST });
  }

  async generationOf(id: string): Promise<{ generation: number; status: SsoProviderStatus } | null> {
    return (await this.repo()).findOne({ select: { generation: true, status: true }, where: { id } });
  }

  /** The database supplies status, generation and the timestamps; the row is read back as stored. */
  async insert(p: NewProvider): Promise<SsoProviderRecord> {
    const repo = await this.repo();
    const { clientSecretSealed, createdBy, ...rest } = p;
    await repo.insert({ ...rest, clientSecretSealed, createdBy, updatedBy: createdBy });
    return repo.findOneByOrFail({ id: p.id });
  }

  /**
   * Writes `patch` and bumps the generation in the same statement, only if the provider is
   * still at `expectedGeneration` (compare-and-swap). Null when it is gone or changed.
   */
  async update(id: string, expectedGeneration: number, patch: ProviderPatch, updatedBy: string | null): Promise<SsoProviderRecord | null> {
    const values: QueryDeepPartialEntity<SsoProviderEntity> = { generation: () => 'generation + 1', updatedBy };
    for (const field of PATCHABLE) if (patch[field] !== undefined) Object.assign(values, { [field]: patch[field] });
    const repo = await this.repo();
    const { affected } = await repo.update({ id, generation: expectedGeneration }, values);
    return affected ? repo.findOneBy({ id }) : null;
  }

  async setStatus(id: string, status: SsoProviderStatus, updatedBy: string | null): Promise<SsoProviderRecord | null> {
    const repo = await this.repo();
    const { affected } = await repo.update({ id }, { status, generation: () => 'generation + 1', updatedBy });
    return affected ? repo.findOneBy({ id }) : null;
  }

  /**
   * Deletes the provider; its login sessions and identity links go with it through the
   * foreign keys' ON DELETE CASCADE. Returns what was removed. The row is locked first, so the
   * count of identity links is the count the delete removes (a new link would need the lock).
   */
  async delete(id: string): Promise<{ record: SsoProviderRecord; identities: number } | null> {
    const record = await this.find(id, { forUpdate: true });
    if (!record) return null;
    const links = await this.db.one<{ n: string }>(`SELECT count(*) AS n FROM user_sso_identities WHERE provider_id = $1`, [id]);
    await (await this.repo()).delete({ id });
    return { record, identities: Number(links!.n) };
  }

  /** Login round trips in flight for the provider. System context only: the table holds their PKCE verifiers. */
  async countLoginSessions(providerId: string): Promise<number> {
    const row = await this.db.one<{ n: string }>(`SELECT count(*) AS n FROM sso_sessions WHERE provider_id = $1`, [providerId]);
    return Number(row!.n);
  }

  /** Drops the unredeemed exchange codes of sessions that were just ended (the sign-in hand-off must not revive them). */
  async dropExchangeCodes(sessionIds: string[]): Promise<void> {
    if (sessionIds.length) await this.db.exec(`DELETE FROM sso_exchange_codes WHERE session_id = ANY ($1::uuid[])`, [sessionIds]);
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

  /** A role of tenancy's, read through its entity (tenancy alone writes it). */
  async role(roleId: string): Promise<Pick<RoleEntity, 'id' | 'scope' | 'orgId' | 'partnerId' | 'permissions'> | null> {
    return (await this.db.repo(RoleEntity)).findOne({ select: { id: true, scope: true, orgId: true, partnerId: true, permissions: true }, where: { id: roleId } });
  }
}
