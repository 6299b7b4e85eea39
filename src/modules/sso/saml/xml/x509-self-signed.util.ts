import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';

/**
 * A fresh RSA-2048 key pair and a self-signed X.509 v3 certificate (SHA-256 with RSA) for the
 * service provider's SAML signing and encryption key. SAML metadata carries keys as certificates;
 * the certificate is only a container for the public key (IdPs pin it, no chain is checked), so it
 * is built here with a minimal DER encoder rather than a dependency on an X.509 library or the
 * openssl command line.
 */
export function selfSignedCertificate(
  commonName: string,
  validDays: number,
  now = new Date(),
  serial = randomBytes(16),
): { privateKeyPem: string; certificatePem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const sha256WithRsa = seq(oid('1.2.840.113549.1.1.11'), Buffer.from([0x05, 0x00]));
  const name = seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
  const notAfter = new Date(now.getTime() + validDays * 86_400_000);
  // A positive serial of 16 random bytes (RFC 5280 §4.1.2.2: at most 20 octets), not zero.
  if (serial.every((b) => b === 0)) serial[serial.length - 1] = 1;
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    sha256WithRsa,
    name,
    seq(time(new Date(now.getTime() - 60_000)), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = sign('sha256', tbs, privateKey);
  const certificate = seq(tbs, sha256WithRsa, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const body = certificate.toString('base64').replace(/(.{64})/g, '$1\n').trimEnd();
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    certificatePem: `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`,
  };
}

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));

/**
 * A non-negative INTEGER in its one DER form: no leading zero octet unless the next octet's high
 * bit is set. A random serial starting 0x00 0x01 was written with its zero (1 key in 256), and
 * OpenSSL 3 rejects such a certificate ("illegal padding").
 */
function integer(value: Buffer): Buffer {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0 && !(value[start + 1] & 0x80)) start++;
  const minimal = value.subarray(start);
  return tlv(0x02, minimal[0] & 0x80 ? Buffer.concat([Buffer.from([0]), minimal]) : minimal);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const part of rest) {
    const chunk: number[] = [];
    let v = part;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i] |= 0x80;
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}
