import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { selfSignedCertificate } from './x509-self-signed.util';

describe('selfSignedCertificate', () => {
  it('builds a certificate X.509 parsers accept, signed by its own key, valid for the days asked', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const made = selfSignedCertificate('rmm sp 1234', 3650, now);
    const cert = new X509Certificate(made.certificatePem);
    expect(cert.subject).toBe('CN=rmm sp 1234');
    expect(cert.issuer).toBe('CN=rmm sp 1234');
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(new Date(cert.validTo).getTime()).toBe(now.getTime() + 3650 * 86_400_000);
    const fromKey = createPublicKey(createPrivateKey(made.privateKeyPem)).export({ type: 'spki', format: 'pem' });
    expect(fromKey).toBe(cert.publicKey.export({ type: 'spki', format: 'pem' }));
  });

  it('uses GeneralizedTime past 2049 and a fresh key and serial each time', () => {
    const a = selfSignedCertificate('a', 30 * 365, new Date('2040-01-01T00:00:00Z'));
    const b = selfSignedCertificate('a', 30 * 365, new Date('2040-01-01T00:00:00Z'));
    expect(new X509Certificate(a.certificatePem).validTo).toMatch(/2069/);
    expect(new X509Certificate(a.certificatePem).serialNumber).not.toBe(new X509Certificate(b.certificatePem).serialNumber);
    expect(a.privateKeyPem).not.toBe(b.privateKeyPem);
  });

  it.each([
    ['starts with a zero octet', '0001020304050607080900010203040506'],
    ['starts with several zero octets', '000000ff01020304'],
    ['has its high bit set', 'ff0102030405060708090a0b0c0d0e0f'],
    ['is zero', '00000000'],
  ])('writes a serial that %s in the one DER form, so that strict parsers accept the certificate', (_case, hex) => {
    const serial = Buffer.from(hex, 'hex');
    const expected = BigInt(`0x${hex}`) === 0n ? 1n : BigInt(`0x${hex}`);
    const cert = new X509Certificate(selfSignedCertificate('rmm sp', 30, new Date('2026-01-01T00:00:00Z'), serial).certificatePem);
    expect(BigInt(`0x${cert.serialNumber}`)).toBe(expected);
    expect(cert.verify(cert.publicKey)).toBe(true);
  });
});
