import { Injectable } from '@nestjs/common';
import { Db } from '../../../infra/database/db.service';

/** The credential columns of users (password hash, TOTP secrets and last step), for the auth module. */
@Injectable()
export class UserCredentialRepository {
  constructor(private readonly db: Db) {}

  /** Records the TOTP step as used; false when that step (or a later one) was already used. */
  async claimTotpStep(userId: string, step: number): Promise<boolean> {
    return (await this.db.exec(`UPDATE users SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2)`, [userId, step])) === 1;
  }

  async setPendingTotp(userId: string, sealed: string): Promise<void> {
    await this.db.exec(`UPDATE users SET totp_pending_secret = $2, updated_at = now() WHERE id = $1`, [userId, sealed]);
  }

  async activateTotp(userId: string, sealed: string): Promise<void> {
    await this.db.exec(`UPDATE users SET totp_secret = $2, totp_pending_secret = NULL, updated_at = now() WHERE id = $1`, [userId, sealed]);
  }

  async setPassword(userId: string, hash: string): Promise<void> {
    await this.db.exec(`UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, [userId, hash]);
  }
}
