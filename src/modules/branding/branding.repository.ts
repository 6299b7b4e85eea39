import { Injectable } from '@nestjs/common';
import { Db } from '../../infra/database/db.service';

export interface BrandingRow {
  partner_id: string;
  logo_url: string | null;
  accent_color: string | null;
  headline: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface BrandingValues {
  logoUrl: string | null;
  accentColor: string | null;
  headline: string | null;
}

@Injectable()
export class BrandingRepository {
  constructor(private readonly db: Db) {}

  find(partnerId: string): Promise<BrandingRow | null> {
    return this.db.one<BrandingRow>(`SELECT * FROM partner_login_branding WHERE partner_id = $1`, [partnerId]);
  }

  /** Full replace: every column takes the given value, null included. */
  replace(partnerId: string, b: BrandingValues): Promise<BrandingRow | null> {
    return this.db.one<BrandingRow>(
      `INSERT INTO partner_login_branding (partner_id, logo_url, accent_color, headline) VALUES ($1, $2, $3, $4)
       ON CONFLICT (partner_id) DO UPDATE
         SET logo_url = excluded.logo_url, accent_color = excluded.accent_color, headline = excluded.headline, updated_at = now()
       RETURNING *`,
      [partnerId, b.logoUrl, b.accentColor, b.headline],
    );
  }
}
