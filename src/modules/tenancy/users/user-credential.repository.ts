import { Injectable } from '@nestjs/common';
import { DbService } from '../../../infra/database/db.service';
import { UserEntity } from './user.entity';

/**
 * The credential columns of users (password hash, TOTP secrets and last step), for the auth module,
 * which reads them with its own SQL (the sign-in checks, auth.repository.ts).
 */
@Injectable()
export class UserCredentialRepository {
  constructor(private readonly db: DbService) {}

  /**
   * Records the TOTP step as used; false when that step (or a later one) was already used.
   * SQL, not the entity: a sign-in step that leaves updated_at alone, which an entity update would set.
   */
  async claimTotpStep(userId: string, step: number): Promise<boolean> {
    return (await this.db.exec(`UPDATE users SET totp_last_step = $2 WHERE id = $1 AND (totp_last_step IS NULL OR totp_last_step < $2)`, [userId, step])) === 1;
  }

  async setPendingTotp(userId: string, sealed: string): Promise<void> {
    await (await this.db.repo(UserEntity)).update({ id: userId }, { totpPendingSecret: sealed });
  }

  async activateTotp(userId: string, sealed: string): Promise<void> {
    await (await this.db.repo(UserEntity)).update({ id: userId }, { totpSecret: sealed, totpPendingSecret: null });
  }

  async setPassword(userId: string, hash: string): Promise<void> {
    await (await this.db.repo(UserEntity)).update({ id: userId }, { passwordHash: hash });
  }
}
