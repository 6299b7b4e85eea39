import { Logger } from '@nestjs/common';
import { SafeFetchError } from '../../../infra/net/net.errors';
import type { SafeFetchService } from '../../../infra/net/safe-fetch.service';
import { OidcProviderMetadataService } from './oidc-provider-metadata.service';

describe('OidcProviderMetadataService', () => {
  const ISSUER = 'https://idp.example.com';
  beforeAll(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterEach(() => jest.useRealTimers());

  function cache(answers: (() => unknown)[]) {
    const fetchJson = jest.fn(async () => {
      const next = answers.shift();
      if (!next) throw new Error('unexpected fetch');
      return next();
    });
    return { metadata: new OidcProviderMetadataService({ fetchJson } as unknown as SafeFetchService), fetchJson };
  }
  const unavailable = () => {
    throw new SafeFetchError('timeout', 'no answer');
  };

  it('reads the RFC 9207 flag and the end-session endpoint from the discovery document, once per 10 minutes', async () => {
    jest.useFakeTimers({ now: 0 });
    const { metadata, fetchJson } = cache([
      () => ({ issuer: ISSUER, authorization_response_iss_parameter_supported: true, end_session_endpoint: `${ISSUER}/logout` }),
      () => ({ issuer: ISSUER }),
    ]);
    expect(await metadata.of(ISSUER)).toEqual({ issParameterSupported: true, endSessionUrl: `${ISSUER}/logout` });
    jest.setSystemTime(9 * 60_000);
    expect((await metadata.of(ISSUER)).issParameterSupported).toBe(true);
    expect(fetchJson).toHaveBeenCalledTimes(1);
    expect(fetchJson).toHaveBeenCalledWith(`${ISSUER}/.well-known/openid-configuration`);
    jest.setSystemTime(11 * 60_000);
    expect(await metadata.of(ISSUER)).toEqual({ issParameterSupported: false, endSessionUrl: null });
  });

  it('counts only a literal true as the flag', async () => {
    const { metadata } = cache([() => ({ issuer: ISSUER, authorization_response_iss_parameter_supported: 'true' })]);
    expect((await metadata.of(ISSUER)).issParameterSupported).toBe(false);
  });

  it('keeps the last document read when the next read fails, and asks again after a minute', async () => {
    jest.useFakeTimers({ now: 0 });
    const { metadata, fetchJson } = cache([
      () => ({ issuer: ISSUER, authorization_response_iss_parameter_supported: true }),
      unavailable,
      () => ({ issuer: ISSUER }),
    ]);
    await metadata.of(ISSUER);
    jest.setSystemTime(11 * 60_000);
    expect((await metadata.of(ISSUER)).issParameterSupported).toBe(true);
    jest.setSystemTime(11 * 60_000 + 30_000);
    expect((await metadata.of(ISSUER)).issParameterSupported).toBe(true);
    expect(fetchJson).toHaveBeenCalledTimes(2);
    jest.setSystemTime(12 * 60_000 + 1);
    expect((await metadata.of(ISSUER)).issParameterSupported).toBe(false);
  });

  it('ignores a document naming another issuer, and an end-session endpoint that is not a short string', async () => {
    const { metadata } = cache([
      () => ({ issuer: 'https://evil.example', authorization_response_iss_parameter_supported: true }),
      () => ({ issuer: `${ISSUER}/`, end_session_endpoint: `https://idp.example.com/${'x'.repeat(600)}` }),
    ]);
    expect(await metadata.of(ISSUER)).toEqual({ issParameterSupported: false, endSessionUrl: null });
    expect(await metadata.of(`${ISSUER}/`)).toEqual({ issParameterSupported: false, endSessionUrl: null });
  });
});
