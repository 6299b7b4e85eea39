import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TimestampColumns } from '../../infra/database/entity-base';

/**
 * partner_login_branding (migration 1763700600000): one row per partner, kept once written (a full
 * replace updates it; nothing deletes it). The CHECK constraints on the logo and the colour are the
 * database's; the DTO validates the same rules first.
 */
@Entity({ name: 'partner_login_branding' })
export class PartnerLoginBrandingEntity extends TimestampColumns {
  @PrimaryColumn({ name: 'partner_id', type: 'uuid' })
  partnerId: string;

  @Column({ name: 'logo_url', type: 'text', nullable: true })
  logoUrl: string | null;

  @Column({ name: 'accent_color', type: 'varchar', length: 7, nullable: true })
  accentColor: string | null;

  @Column({ name: 'headline', type: 'varchar', length: 120, nullable: true })
  headline: string | null;
}
