import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';

export interface MobileDeviceRow {
  id: string;
  platform: 'ios' | 'android';
  created_at: Date;
  updated_at: Date;
}

/** Phones are rows of their user: the policy shows a session its own user's phones only. */
@Injectable()
export class MobileDeviceRepository {
  constructor(private readonly db: DbService) {}

  count(userId: string): Promise<number> {
    return this.db.one<{ n: string }>(`SELECT count(*) AS n FROM mobile_devices WHERE user_id = $1`, [userId]).then((r) => Number(r!.n));
  }

  /** A token registered again by the same user updates the existing row (same id, same sealed token). */
  upsert(d: { id: string; userId: string; platform: string; sealedToken: string; tokenHmac: string }): Promise<MobileDeviceRow & { inserted: boolean }> {
    return this.db
      .one<MobileDeviceRow & { inserted: boolean }>(
        `INSERT INTO mobile_devices (id, user_id, platform, push_token, push_token_hmac) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (user_id, push_token_hmac) DO UPDATE SET platform = EXCLUDED.platform, updated_at = now()
         RETURNING id, platform, created_at, updated_at, (xmax = 0) AS inserted`,
        [d.id, d.userId, d.platform, d.sealedToken, d.tokenHmac],
      )
      .then((r) => r!);
  }

  list(userId: string): Promise<MobileDeviceRow[]> {
    return this.db.rows<MobileDeviceRow>(`SELECT id, platform, created_at, updated_at FROM mobile_devices WHERE user_id = $1 ORDER BY created_at, id`, [userId]);
  }

  delete(userId: string, id: string): Promise<number> {
    return this.db.exec(`DELETE FROM mobile_devices WHERE user_id = $1 AND id = $2`, [userId, id]);
  }
}
