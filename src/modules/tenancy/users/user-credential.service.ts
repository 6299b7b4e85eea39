import { Injectable } from '@nestjs/common';
import { UserCredentialRepository } from './user-credential.repository';

/**
 * Writes a user's credentials (already hashed or sealed by the auth module) in the caller's
 * transaction. Users belong to tenancy, which alone writes them; the auth module decides what
 * to write and calls this service.
 */
@Injectable()
export class UserCredentialService {
  constructor(private readonly repo: UserCredentialRepository) {}

  /** Records the TOTP step as used; false when that step (or a later one) was already used. */
  claimTotpStep(userId: string, step: number): Promise<boolean> {
    return this.repo.claimTotpStep(userId, step);
  }

  setPendingTotp(userId: string, sealed: string): Promise<void> {
    return this.repo.setPendingTotp(userId, sealed);
  }

  activateTotp(userId: string, sealed: string): Promise<void> {
    return this.repo.activateTotp(userId, sealed);
  }

  setPassword(userId: string, hash: string): Promise<void> {
    return this.repo.setPassword(userId, hash);
  }
}
