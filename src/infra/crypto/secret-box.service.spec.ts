import { SecretBoxService } from './secret-box.service';

const KEY_A = 'a'.repeat(40);
const KEY_B = 'b'.repeat(40);

describe('SecretBoxService', () => {
  it('round-trips a secret and never stores the plaintext', () => {
    const box = new SecretBoxService({ encryptionKey: KEY_A, previousEncryptionKeys: [] });
    const sealed = box.encrypt('client-secret-123', 'sso_providers.client_secret:p1');
    expect(sealed).not.toContain('client-secret-123');
    expect(sealed.startsWith('enc:v1:')).toBe(true);
    expect(box.decrypt(sealed, 'sso_providers.client_secret:p1')).toBe('client-secret-123');
  });

  it('produces a different ciphertext each time for the same secret', () => {
    const box = new SecretBoxService({ encryptionKey: KEY_A, previousEncryptionKeys: [] });
    expect(box.encrypt('x', 'c')).not.toBe(box.encrypt('x', 'c'));
  });

  it('refuses a ciphertext moved to another row or column', () => {
    const box = new SecretBoxService({ encryptionKey: KEY_A, previousEncryptionKeys: [] });
    const sealed = box.encrypt('s', 'sso_providers.client_secret:p1');
    expect(() => box.decrypt(sealed, 'sso_providers.client_secret:p2')).toThrow('could not be decrypted');
  });

  it('refuses a tampered ciphertext', () => {
    const box = new SecretBoxService({ encryptionKey: KEY_A, previousEncryptionKeys: [] });
    const sealed = box.encrypt('secret', 'c');
    const last = sealed.at(-1) === 'A' ? 'B' : 'A';
    expect(() => box.decrypt(sealed.slice(0, -1) + last, 'c')).toThrow();
  });

  it('reads values sealed under a previous key after rotation and flags them for re-encryption', () => {
    const old = new SecretBoxService({ encryptionKey: KEY_A, previousEncryptionKeys: [] });
    const sealed = old.encrypt('rotate-me', 'c');
    const rotated = new SecretBoxService({ encryptionKey: KEY_B, previousEncryptionKeys: [KEY_A] });
    expect(rotated.decrypt(sealed, 'c')).toBe('rotate-me');
    expect(rotated.needsRotation(sealed)).toBe(true);
    expect(rotated.needsRotation(rotated.encrypt('x', 'c'))).toBe(false);
  });

  it('cannot read values sealed under a key it was not given', () => {
    const sealed = new SecretBoxService({ encryptionKey: KEY_A, previousEncryptionKeys: [] }).encrypt('x', 'c');
    const other = new SecretBoxService({ encryptionKey: KEY_B, previousEncryptionKeys: [] });
    expect(() => other.decrypt(sealed, 'c')).toThrow('unknown key');
  });

  it('verifies HMAC signatures in constant time and rejects altered values', () => {
    const box = new SecretBoxService({ encryptionKey: KEY_A, previousEncryptionKeys: [] });
    const sig = box.hmac('state-1');
    expect(box.hmacEquals('state-1', sig)).toBe(true);
    expect(box.hmacEquals('state-2', sig)).toBe(false);
    expect(box.hmacEquals('state-1', sig.slice(1))).toBe(false);
  });
});
