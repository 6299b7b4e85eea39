import { Injectable } from '@nestjs/common';
import { DbService } from '../../infra/database/db.service';
import { PartnerLoginBrandingEntity } from './partner-login-branding.entity';

export type BrandingValues = Pick<PartnerLoginBrandingEntity, 'logoUrl' | 'accentColor' | 'headline'>;

/** The only writer of partner_login_branding, through the request's transaction (DbService.repo). */
@Injectable()
export class BrandingRepository {
  constructor(private readonly db: DbService) {}

  async find(partnerId: string): Promise<PartnerLoginBrandingEntity | null> {
    return (await this.db.repo(PartnerLoginBrandingEntity)).findOneBy({ partnerId });
  }

  /**
   * Full replace: every column takes the given value, null included, in one statement
   * (INSERT … ON CONFLICT DO UPDATE, updated_at set to its default). The upsert fills the
   * generated columns of the entity it was given.
   */
  async replace(partnerId: string, values: BrandingValues): Promise<PartnerLoginBrandingEntity> {
    const repo = await this.db.repo(PartnerLoginBrandingEntity);
    const row = repo.create({ partnerId, ...values });
    await repo.upsert(row, ['partnerId']);
    return row;
  }
}
