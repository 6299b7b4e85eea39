import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';
import { PartnerEntity } from './partner.entity';

/** Partners, through the caller's transaction (Db.repo). */
@Injectable()
export class PartnerRepository {
  constructor(private readonly db: Db) {}

  /** The new partner's id; its status is the column default (active). */
  async insert(name: string): Promise<string> {
    const { identifiers } = await (await this.db.repo(PartnerEntity)).insert({ name });
    return (identifiers[0] as { id: string }).id;
  }
}
