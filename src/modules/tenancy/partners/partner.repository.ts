import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import { PartnerEntity } from './partner.entity';

/** Partners, through the caller's transaction (DbService.repo). */
@Injectable()
export class PartnerRepository {
  constructor(private readonly db: DbService) {}

  /** The new partner's id; its status is the column default (active). */
  async insert(name: string): Promise<string> {
    const { identifiers } = await (await this.db.repo(PartnerEntity)).insert({ name });
    return (identifiers[0] as { id: string }).id;
  }
}
