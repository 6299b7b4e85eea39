import { Injectable } from '@nestjs/common';
import { Raw, type FindOptionsWhere, type QueryDeepPartialEntity, type Repository } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { SsoDomainEntity } from './sso-domain.entity';

/** The only writer of sso_verified_domains, through the request's (or job's) transaction (DbService.repo). */
@Injectable()
export class SsoDomainRepository {
  constructor(private readonly db: DbService) {}

  private repo(): Promise<Repository<SsoDomainEntity>> {
    return this.db.repo(SsoDomainEntity);
  }

  async list(orgId: string | null): Promise<SsoDomainEntity[]> {
    const repo = await this.repo();
    return orgId ? repo.find({ where: { orgId }, order: { domain: 'ASC', id: 'ASC' } }) : repo.find({ order: { orgId: 'ASC', domain: 'ASC', id: 'ASC' } });
  }

  async find(id: string): Promise<SsoDomainEntity | null> {
    return (await this.repo()).findOneBy({ id });
  }

  /** Null when the organization already claimed the domain (the unique key on org_id and domain). */
  async insert(d: { orgId: string; domain: string; token: string; createdBy: string | null }): Promise<SsoDomainEntity | null> {
    const repo = await this.repo();
    const { raw } = await repo.createQueryBuilder().insert().values(d).orIgnore().returning('id').execute();
    const inserted = (raw as { id: string }[])[0];
    return inserted ? repo.findOneByOrFail({ id: inserted.id }) : null;
  }

  /** The domain as it was, or null when the caller cannot see it. */
  async delete(id: string): Promise<SsoDomainEntity | null> {
    const repo = await this.repo();
    const row = await repo.findOneBy({ id });
    if (!row) return null;
    const { affected } = await repo.delete({ id });
    return affected ? row : null;
  }

  /** The record was seen: verified from now on (keeping the first verification time). */
  markSeen(id: string): Promise<SsoDomainEntity | null> {
    return this.updated({ id }, { verified: true, verifiedAt: () => 'coalesce(verified_at, now())', lastSeenAt: () => 'now()', lastCheckedAt: () => 'now()' });
  }

  markChecked(id: string): Promise<SsoDomainEntity | null> {
    return this.updated({ id }, { lastCheckedAt: () => 'now()' });
  }

  /**
   * Un-verifies a domain whose record was last seen more than `graceHours` ago. The
   * predicate makes it a compare-and-swap: when several instances run the re-check at
   * once, exactly one of them gets the row back (and writes the audit event).
   */
  unverifyIfStale(id: string, graceHours: number): Promise<SsoDomainEntity | null> {
    return this.updated(
      { id, verified: true, lastSeenAt: Raw((column) => `${column} < now() - :graceHours * interval '1 hour'`, { graceHours }) },
      { verified: false, verifiedAt: null, lastCheckedAt: () => 'now()' },
    );
  }

  async listVerified(): Promise<SsoDomainEntity[]> {
    return (await this.repo()).find({ where: { verified: true }, order: { lastCheckedAt: { direction: 'ASC', nulls: 'FIRST' }, id: 'ASC' } });
  }

  async verifiedOrgIds(domain: string): Promise<string[]> {
    const rows = await (await this.repo()).find({ select: { orgId: true }, where: { domain, verified: true }, order: { orgId: 'ASC' } });
    return rows.map((r) => r.orgId);
  }

  /** organizations belongs to tenancy: a read of its own. */
  async organizationVisible(orgId: string): Promise<boolean> {
    return (await this.db.one(`SELECT 1 FROM organizations WHERE id = $1`, [orgId])) !== null;
  }

  /** Updates the row the predicate still matches and reads it back in the same transaction; null when none matched. */
  private async updated(where: FindOptionsWhere<SsoDomainEntity>, values: QueryDeepPartialEntity<SsoDomainEntity>): Promise<SsoDomainEntity | null> {
    const repo = await this.repo();
    const { affected } = await repo.update(where, values);
    return affected ? repo.findOneBy({ id: where.id as string }) : null;
  }
}
