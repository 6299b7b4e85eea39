import { Logger } from '@nestjs/common';
import { randomToken, SecretBox } from '../../../infra/crypto/secret-box.service';
import type { TenantTransaction } from '../../../infra/database/tenant-transaction.service';
import type { AccountResolver } from '../login/account-resolver.service';
import type { LoginAudit } from '../login/login-audit.service';
import type { LoginRejection } from '../login/sso-login.errors';
import type { SsoLoginRepository } from '../login/sso-login.repository';
import { stateCookieValue } from '../login/state-cookie.util';
import { SamlAcsService } from './saml-acs.service';
import type { SamlRequestCache } from './saml-request-cache.service';
import type { SamlServiceProvider } from './saml-sp.service';
import type { SamlRepository } from './saml.repository';
import type { SsoSignOutService } from '../login/sso-sign-out.service';
import type { SamlSpKeys } from './saml-sp-keys.service';
import type { SamlSpKeysRepository } from './saml-sp-keys.repository';

describe('SamlAcsService', () => {
  const box = new SecretBox({ encryptionKey: 'k'.repeat(40), previousEncryptionKeys: [] });
  const tx = { withSystemContext: (_reason: string, fn: () => Promise<unknown>) => fn() } as unknown as TenantTransaction;

  function build(loginRepo: Partial<SsoLoginRepository>) {
    const audited: { rejection: LoginRejection; apart: boolean }[] = [];
    const audit = {
      rejected: async (rejection: LoginRejection) => void audited.push({ rejection, apart: false }),
      rejectedApart: async (rejection: LoginRejection) => void audited.push({ rejection, apart: true }),
    } as unknown as LoginAudit;
    const svc = new SamlAcsService(
      loginRepo as SsoLoginRepository,
      {} as SamlRepository,
      tx,
      box,
      {} as SamlServiceProvider,
      {} as SamlRequestCache,
      {} as AccountResolver,
      audit,
      {} as SsoSignOutService,
      {} as SamlSpKeys,
      {} as SamlSpKeysRepository,
    );
    return { svc, audited };
  }

  it('checks the browser binding before touching the login session', async () => {
    const consume = jest.fn();
    const { svc, audited } = build({ consumeLoginSession: consume, peekLoginSession: async () => null });
    const relayState = randomToken(32);
    const result = await svc.handle({ SAMLResponse: 'x', RelayState: relayState }, stateCookieValue(box, randomToken(32)));
    expect(result).toEqual({ location: '/login?error=invalid_callback', clearStateCookie: false });
    expect(consume).not.toHaveBeenCalled();
    expect(audited.map((a) => a.rejection.reason)).toEqual(['state_cookie_mismatch']);
  });

  it('turns an unexpected failure into sso_error, audited, without any of the error text', async () => {
    const { svc, audited } = build({
      consumeLoginSession: async () => {
        throw new Error('relation "sso_sessions" does not exist');
      },
    });
    const relayState = randomToken(32);
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const result = await svc.handle({ SAMLResponse: 'x', RelayState: relayState }, stateCookieValue(box, relayState));
      expect(result).toEqual({ location: '/login?error=sso_error', clearStateCookie: true });
      expect(audited).toEqual([{ rejection: expect.objectContaining({ code: 'sso_error', reason: 'internal_error' }), apart: true }]);
      // The cause is logged for the operator (only the audit row and the redirect are the caller's).
      expect(logged).toHaveBeenCalledWith({ err: expect.objectContaining({ message: 'relation "sso_sessions" does not exist' }) }, 'SAML assertion consumer failed');
    } finally {
      logged.mockRestore();
    }
  });
});
