import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

@Injectable()
export class PartnerRepository {
  constructor(private readonly db: Db) {}

  async insert(name: string): Promise<string> {
    const row = await this.db.one<{ id: string }>(`INSERT INTO partners (name) VALUES ($1) RETURNING id`, [name]);
    return row!.id;
  }
}
