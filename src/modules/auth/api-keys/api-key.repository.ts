import { Injectable } from '@nestjs/common';
import { IsNull } from 'typeorm';
import { DbService } from '../../../infra/database/db.service';
import { ApiKeyEntity } from './api-key.entity';

export type NewApiKey = Pick<ApiKeyEntity, 'orgId' | 'partnerId' | 'name' | 'keyPrefix' | 'keyHash' | 'permissions' | 'mfaSatisfied' | 'createdBy' | 'expiresAt'>;

/** The only writer of api_keys, through the request's transaction (DbService.repo). */
@Injectable()
export class ApiKeyRepository {
  constructor(private readonly db: DbService) {}

  async list(orgId: string | undefined): Promise<ApiKeyEntity[]> {
    return (await this.db.repo(ApiKeyEntity)).find({ where: orgId ? { orgId } : {}, order: { createdAt: 'DESC', id: 'ASC' } });
  }

  async find(id: string): Promise<ApiKeyEntity | null> {
    return (await this.db.repo(ApiKeyEntity)).findOneBy({ id });
  }

  /** One INSERT; the id and creation time come back in its RETURNING clause. The hash is dropped from the entity returned. */
  async insert(k: NewApiKey): Promise<ApiKeyEntity> {
    const repo = await this.db.repo(ApiKeyEntity);
    const { keyHash: _hash, ...key } = await repo.save(repo.create({ ...k, revokedAt: null, lastUsedAt: null }));
    return key as ApiKeyEntity;
  }

  /** Idempotent: a revoked key keeps its first revocation time. Null when the caller cannot see the key. */
  async revoke(id: string): Promise<ApiKeyEntity | null> {
    const repo = await this.db.repo(ApiKeyEntity);
    await repo.update({ id, revokedAt: IsNull() }, { revokedAt: () => 'now()' });
    return repo.findOneBy({ id });
  }
}
