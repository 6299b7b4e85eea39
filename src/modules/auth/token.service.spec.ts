import type { AppConfig } from '../../infra/config/app-config';
import { ACCESS_TOKEN_TTL_SECONDS, TokenService, type AccessClaims } from './token.service';

const claims: AccessClaims = { sub: 'user-1', sid: 'session-1', scope: 'partner', orgId: null, partnerId: 'partner-1', mfa: true };
const service = (secret = 'a'.repeat(64)) => new TokenService({ jwtSecret: secret } as AppConfig);

describe('TokenService access tokens', () => {
  afterEach(() => jest.useRealTimers());

  it('answers a token it verified before with the same claims', async () => {
    const tokens = service();
    const token = await tokens.signAccess(claims);
    expect(await tokens.verifyAccess(token)).toEqual(claims);
    expect(await tokens.verifyAccess(token)).toEqual(claims);
  });

  it('refuses a token it verified before once the token has expired', async () => {
    jest.useFakeTimers({ now: new Date('2026-11-25T12:00:00Z'), doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const tokens = service();
    const token = await tokens.signAccess(claims);
    expect(await tokens.verifyAccess(token)).toEqual(claims);
    jest.setSystemTime(new Date(Date.parse('2026-11-25T12:00:00Z') + (ACCESS_TOKEN_TTL_SECONDS + 4) * 1000));
    expect(await tokens.verifyAccess(token)).toEqual(claims);
    jest.setSystemTime(new Date(Date.parse('2026-11-25T12:00:00Z') + (ACCESS_TOKEN_TTL_SECONDS + 6) * 1000));
    expect(await tokens.verifyAccess(token)).toBeNull();
  });

  it('refuses a token signed with another secret and a token whose payload was altered', async () => {
    const tokens = service();
    const good = await tokens.signAccess(claims);
    await tokens.verifyAccess(good);
    const foreign = await service('b'.repeat(64)).signAccess(claims);
    const [header, payload, signature] = good.split('.');
    const altered = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    altered.sub = 'user-2';
    const forged = [header, Buffer.from(JSON.stringify(altered)).toString('base64url'), signature].join('.');
    expect(await tokens.verifyAccess(foreign)).toBeNull();
    expect(await tokens.verifyAccess(forged)).toBeNull();
  });
});
