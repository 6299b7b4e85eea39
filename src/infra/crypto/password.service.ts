import { Injectable } from '@nestjs/common';
import * as argon2 from 'argon2';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** argon2id password hashing (OWASP minimum parameters). */
@Injectable()
export class PasswordService {
  // Verifying against this when the account does not exist keeps the timing indistinguishable.
  private readonly dummy = argon2.hash('not-a-real-password-' + Math.random(), OPTIONS);

  hash(password: string): Promise<string> {
    return argon2.hash(password, OPTIONS);
  }

  async verify(hash: string | null | undefined, password: string): Promise<boolean> {
    if (!hash) {
      await argon2.verify(await this.dummy, password).catch(() => false);
      return false;
    }
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  }
}
