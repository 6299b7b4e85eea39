import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, signedHeaders } from './webhook-signing.util';

describe('webhook signing', () => {
  const body = JSON.stringify({ type: 'elevation.approved', data: { id: 'x' } });

  it('generates distinct whsec_ secrets of 32 random bytes', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });

  it('signs so that the Standard Webhooks verifier accepts the message with the secret, and refuses it with another', () => {
    const secret = newWebhookSecret();
    const headers = signedHeaders('6f1c2a4e-8d0b-4c1e-9a53-3b7f0d2c9e11', body, [secret], new Date());
    expect(headers['webhook-id']).toBe('6f1c2a4e-8d0b-4c1e-9a53-3b7f0d2c9e11');
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow(/No matching signature/);
  });

  it('sends one space-separated signature per secret, each verifiable on its own', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const headers = signedHeaders('m-1', body, [current, previous], new Date());
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['webhook-signature'].split(' ').every((s) => s.startsWith('v1,'))).toBe(true);
    expect(new Webhook(current).verify(body, headers)).toBeTruthy();
    expect(new Webhook(previous).verify(body, headers)).toBeTruthy();
  });

  it('states the timestamp in whole seconds', () => {
    expect(signedHeaders('m', body, [newWebhookSecret()], new Date('2030-01-02T03:04:05.678Z'))['webhook-timestamp']).toBe('1893553445');
  });
});
