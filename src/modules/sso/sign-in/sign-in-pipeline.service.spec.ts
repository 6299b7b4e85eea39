import { Logger } from '@nestjs/common';
import { randomToken, SecretBoxService } from '../../../infra/crypto/secret-box.service';
import type { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import type { AuditEntry, AuditService } from '../../audit/audit.service';
import { RefusalService } from '../../audit/refusal.service';
import type { SessionService } from '../../auth/session.service';
import type { IdentityLinkerService } from '../linking/identity-linker.service';
import type { AccountResolverService } from '../login/account-resolver.service';
import type { SsoExchangeService } from '../login/sso-exchange.service';
import { LoginRejection } from '../login/sso-login.errors';
import type { LoginProviderRow, LoginSessionRow, SsoLoginRepository } from '../login/sso-login.repository';
import { stateCookieValue } from '../login/state-cookie.util';
import { SignInPipelineService, SignInProtocol } from './sign-in-pipeline.service';
import type { MetricsService } from '../../../infra/metrics/metrics.service';

describe('SignInPipelineService', () => {
  const box = new SecretBoxService({ encryptionKey: 'k'.repeat(40), previousEncryptionKeys: [] });
  const tx = { withSystemContext: (_reason: string, fn: () => Promise<unknown>) => fn() } as unknown as TenantTransactionService;
  const session = { id: 's', org_id: 'o', partner_id: null, provider_id: 'p', generation: 1, purpose: 'login', redirect_url: '/' } as LoginSessionRow;
  const provider = { id: 'p', org_id: 'o', partner_id: null, status: 'active', generation: 1 } as LoginProviderRow;

  function build(repo: Partial<SsoLoginRepository>, protocol: Partial<SignInProtocol<unknown, unknown>> = {}) {
    const audited: AuditEntry[] = [];
    const audit = { record: async (entry: AuditEntry) => void audited.push(entry) } as unknown as AuditService;
    const pipeline = new SignInPipelineService(
      repo as SsoLoginRepository,
      box,
      new RefusalService(tx, audit),
      {} as AccountResolverService,
      {} as IdentityLinkerService,
      {} as SessionService,
      {} as SsoExchangeService,
      audit,
      { signIn: () => undefined } as unknown as MetricsService,
    );
    const adapter: SignInProtocol<unknown, unknown> = {
      traits: { protocol: 'oidc', malformedStateReason: 'state_parameter_invalid', failureMessage: 'Test sign-in failed', linking: false },
      precheck: async () => undefined,
      configure: async () => ({}),
      verify: async () => {
        throw new Error('not reached');
      },
      recordSession: async () => undefined,
      ...protocol,
    };
    return { complete: (state: string, cookie: unknown) => pipeline.complete(adapter, state, {}, cookie), audited };
  }

  it('checks the browser binding before touching the login session, and keeps the state cookie', async () => {
    const consume = jest.fn();
    const { complete, audited } = build({ consumeLoginSession: consume, peekLoginSession: async () => null });
    const result = await complete(randomToken(32), stateCookieValue(box, randomToken(32)));
    expect(result).toEqual({ location: '/login?error=invalid_callback', clearStateCookie: false });
    expect(consume).not.toHaveBeenCalled();
    expect(audited.map((a) => a.details?.reason)).toEqual(['state_cookie_mismatch']);
  });

  it("names the protocol's own reason for a state that is not even well formed", async () => {
    const { complete, audited } = build({}, { traits: { protocol: 'saml', malformedStateReason: 'relay_state_invalid', failureMessage: 'Test sign-in failed', linking: false } });
    const result = await complete('not-a-state', undefined);
    expect(result.location).toBe('/login?error=invalid_callback');
    expect(audited.map((a) => a.details?.reason)).toEqual(['relay_state_invalid']);
  });

  it("audits a protocol's rejection with the tenant of the consumed session and redirects with its public code only", async () => {
    const state = randomToken(32);
    const { complete, audited } = build(
      { consumeLoginSession: async () => ({ session, provider }) },
      {
        verify: async () => {
          throw new LoginRejection('sso_error', 'assertion_replayed');
        },
      },
    );
    const result = await complete(state, stateCookieValue(box, state));
    expect(result).toEqual({ location: '/login?error=sso_error', clearStateCookie: true });
    expect(audited).toEqual([expect.objectContaining({ action: 'sso.login.rejected', orgId: 'o', resourceId: 'p', details: { code: 'sso_error', reason: 'assertion_replayed' } })]);
  });

  it('refuses a provider reconfigured since the start before the protocol reads the response', async () => {
    const state = randomToken(32);
    const configure = jest.fn();
    const { complete, audited } = build({ consumeLoginSession: async () => ({ session, provider: { ...provider, generation: 2 } }) }, { configure });
    const result = await complete(state, stateCookieValue(box, state));
    expect(result.location).toBe('/login?error=sso_config_changed');
    expect(configure).not.toHaveBeenCalled();
    expect(audited.map((a) => a.details?.reason)).toEqual(['provider_reconfigured_since_login_start']);
  });

  it('turns an unexpected failure into sso_error, audited, without any of the error text', async () => {
    const { complete, audited } = build({
      consumeLoginSession: async () => {
        throw new Error('relation "sso_sessions" does not exist');
      },
    });
    const state = randomToken(32);
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const result = await complete(state, stateCookieValue(box, state));
      expect(result).toEqual({ location: '/login?error=sso_error', clearStateCookie: true });
      expect(audited).toEqual([expect.objectContaining({ action: 'sso.login.rejected', details: { code: 'sso_error', reason: 'internal_error' } })]);
      // The cause is logged for the operator (only the audit row and the redirect are the caller's).
      expect(logged).toHaveBeenCalledWith({ err: expect.objectContaining({ message: 'relation "sso_sessions" does not exist' }) }, 'Test sign-in failed');
    } finally {
      logged.mockRestore();
    }
  });
});
