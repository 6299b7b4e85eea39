import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';

interface KeyEncryptionKey {
  id: string;
  key: Buffer;
}

const FORMAT = 'enc:v1';

function deriveKek(secret: string): KeyEncryptionKey {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), 'svc/secret-box/kek/v1', 32));
  const id = createHash('sha256').update(key).digest('hex').slice(0, 12);
  return { id, key };
}

function seal(key: Buffer, plaintext: Buffer, aad: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return [iv, cipher.getAuthTag(), ct].map((b) => b.toString('base64url')).join('.');
}

function open(key: Buffer, sealed: string, aad: Buffer): Buffer {
  const [iv, tag, ct] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ct), decipher.final()]);
}

export class SecretDecryptionError extends Error {}

/**
 * Envelope encryption for secrets at rest (client secrets, IdP tokens, TOTP seeds).
 * Each value gets its own random data key, sealed with AES-256-GCM under a key-encryption key
 * derived from SECRET_ENCRYPTION_KEY. The envelope names the KEK id, so keys can rotate:
 * the previous keys stay readable while new values are written under the current one.
 * `context` is bound as associated data, so a ciphertext copied into another row or column fails.
 */
@Injectable()
export class SecretBoxService {
  private readonly current: KeyEncryptionKey;
  private readonly byId: Map<string, KeyEncryptionKey>;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'encryptionKey' | 'previousEncryptionKeys'>) {
    this.current = deriveKek(config.encryptionKey);
    this.byId = new Map([this.current, ...config.previousEncryptionKeys.map(deriveKek)].map((k) => [k.id, k]));
    this.hmacKey = Buffer.from(config.encryptionKey, 'utf8');
  }

  private readonly hmacKey: Buffer;

  encrypt(plaintext: string, context: string): string {
    const aad = Buffer.from(context, 'utf8');
    const dataKey = randomBytes(32);
    const wrapped = seal(this.current.key, dataKey, aad);
    const body = seal(dataKey, Buffer.from(plaintext, 'utf8'), aad);
    return `${FORMAT}:${this.current.id}:${wrapped}:${body}`;
  }

  decrypt(envelope: string, context: string): string {
    const parts = envelope.split(':');
    if (parts.length !== 5 || `${parts[0]}:${parts[1]}` !== FORMAT) throw new SecretDecryptionError('Unrecognised secret envelope');
    const kek = this.byId.get(parts[2]);
    if (!kek) throw new SecretDecryptionError('Secret was sealed with an unknown key');
    try {
      const aad = Buffer.from(context, 'utf8');
      const dataKey = open(kek.key, parts[3], aad);
      return open(dataKey, parts[4], aad).toString('utf8');
    } catch {
      throw new SecretDecryptionError('Secret could not be decrypted');
    }
  }

  /** True when the value was sealed under an older key and should be re-encrypted. */
  needsRotation(envelope: string): boolean {
    return envelope.split(':')[2] !== this.current.id;
  }

  /** HMAC-SHA256 keyed by the encryption key (spec 1.1.3: the state cookie signature). */
  hmac(value: string): string {
    return createHmac('sha256', this.hmacKey).update(value, 'utf8').digest('base64url');
  }

  hmacEquals(value: string, signature: string): boolean {
    const expected = Buffer.from(this.hmac(value));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/** Hash of a high-entropy token (refresh tokens, API keys, agent tokens, exchange codes). */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
