import { randomToken, SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { CALLBACK_PATH, stateCookieOptions, stateCookieValue, stateMatchesCookie } from './state-cookie.util';

const box = new SecretBoxService({ encryptionKey: 'k'.repeat(40), previousEncryptionKeys: [] });
const otherKey = new SecretBoxService({ encryptionKey: 'z'.repeat(40), previousEncryptionKeys: [] });

describe('svc_sso_state cookie', () => {
  const state = randomToken(32);

  it('accepts the cookie issued for the same state', () => {
    expect(stateMatchesCookie(box, state, stateCookieValue(box, state))).toBe(true);
  });

  it('refuses a cookie issued for another state (a callback opened in another browser)', () => {
    expect(stateMatchesCookie(box, state, stateCookieValue(box, randomToken(32)))).toBe(false);
  });

  it('refuses a cookie whose state was swapped while keeping the old signature', () => {
    const forged = `${state}.${box.hmac(randomToken(32))}`;
    expect(stateMatchesCookie(box, state, forged)).toBe(false);
  });

  it('refuses a cookie signed with another key', () => {
    expect(stateMatchesCookie(box, state, stateCookieValue(otherKey, state))).toBe(false);
  });

  it('refuses a missing cookie, a cookie without signature and a malformed state', () => {
    expect(stateMatchesCookie(box, state, undefined)).toBe(false);
    expect(stateMatchesCookie(box, state, state)).toBe(false);
    expect(stateMatchesCookie(box, 'short', stateCookieValue(box, 'short'))).toBe(false);
    expect(stateMatchesCookie(box, ['a'], stateCookieValue(box, state))).toBe(false);
  });

  it('is HttpOnly, SameSite=Lax, scoped to the callback and lives ten minutes; Secure only when asked', () => {
    expect(stateCookieOptions(true)).toEqual({ httpOnly: true, sameSite: 'lax', secure: true, path: CALLBACK_PATH, maxAge: 600_000 });
    expect(stateCookieOptions(false).secure).toBe(false);
  });
});
