import { Injectable } from '@nestjs/common';
import { authenticator } from 'otplib';

authenticator.options = { step: 30, window: 1, digits: 6 };

const ISSUER = 'RMM Identity';

/** TOTP (RFC 6238) via otplib: 30 s step, ±1 step, with single use of each step. */
@Injectable()
export class MfaService {
  newSecret(): string {
    return authenticator.generateSecret(20);
  }

  otpauthUrl(email: string, secret: string): string {
    return authenticator.keyuri(email, ISSUER, secret);
  }

  /** The time step the code belongs to, or null when it matches none in the window. */
  matchingStep(secret: string, code: string, now = Date.now()): number | null {
    if (!/^\d{6}$/.test(code)) return null;
    const delta = authenticator.checkDelta(code, secret);
    if (delta === null) return null;
    return Math.floor(now / 1000 / 30) + delta;
  }

  /** For tests and the demo seed: the current code of a secret. */
  static currentCode(secret: string): string {
    return authenticator.generate(secret);
  }
}
