import { Logger } from '@nestjs/common';
import { randomToken, SecretBox } from '../../../infra/crypto/secret-box.service';
import type { TenantTransaction } from '../../../infra/database/tenant-transaction.service';
import type { IdentityLinker } from '../linking/identity-linker.service';
import type { AccountResolver } from './account-resolver.service';
import type { LoginAudit } from './login-audit.service';
import type { OidcLoginStarter } from './oidc-login-starter.service';
import type { OidcRelyingParty } from './oidc-relying-party.service';
import { SsoCallbackService } from './sso-callback.service';
import type { LoginRejection } from './sso-login.errors';
import type { SsoLoginRepository } from './sso-login.repository';
import type { SsoSignOutService } from './sso-sign-out.service';
import { stateCookieValue } from './state-cookie.util';

describe('SsoCallbackService', () => {
  const box = new SecretBox({ encryptionKey: 'k'.repeat(40), previousEncryptionKeys: [] });
  const tx = { withSystemContext: (_reason: string, fn: () => Promise<unknown>) => fn() } as unknown as TenantTransaction;

  function build(repo: Partial<SsoLoginRepository>) {
    const audited: { rejection: LoginRejection; apart: boolean }[] = [];
    const audit = {
      rejected: async (rejection: LoginRejection) => void audited.push({ rejection, apart: false }),
      rejectedApart: async (rejection: LoginRejection) => void audited.push({ rejection, apart: true }),
    } as unknown as LoginAudit;
    const svc = new SsoCallbackService(
      repo as SsoLoginRepository,
      tx,
      box,
      {} as OidcRelyingParty,
      {} as OidcLoginStarter,
      {} as AccountResolver,
      {} as IdentityLinker,
      audit,
      {} as SsoSignOutService,
    );
    return { svc, audited };
  }

  it('checks the browser binding before touching the login session', async () => {
    const consume = jest.fn();
    const { svc, audited } = build({ consumeLoginSession: consume, peekLoginSession: async () => null });
    const state = randomToken(32);
    const result = await svc.handle({ state, code: 'c' }, stateCookieValue(box, randomToken(32)));
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
    const state = randomToken(32);
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const result = await svc.handle({ state, code: 'c' }, stateCookieValue(box, state));
      expect(result).toEqual({ location: '/login?error=sso_error', clearStateCookie: true });
      expect(audited).toEqual([{ rejection: expect.objectContaining({ code: 'sso_error', reason: 'internal_error' }), apart: true }]);
      // The cause is logged for the operator (only the audit row and the redirect are the caller's).
      expect(logged).toHaveBeenCalledWith({ err: expect.objectContaining({ message: 'relation "sso_sessions" does not exist' }) }, 'SSO callback failed');
    } finally {
      logged.mockRestore();
    }
  });
});
