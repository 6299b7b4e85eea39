import { Logger } from '@nestjs/common';
import type { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import type { LoginProviderRow, SsoLoginRepository } from '../login/sso-login.repository';
import type { EmailDiscoveryRepository } from './email-discovery.repository';
import { EmailDiscoveryService } from './email-discovery.service';

const ORG = '7d1c3a56-6f5e-4d55-9a43-3f4f0d1f2b11';

function provider(overrides: Partial<LoginProviderRow> = {}): LoginProviderRow {
  return {
    id: 'p1',
    org_id: ORG,
    partner_id: null,
    name: 'Corp',
    type: 'oidc',
    status: 'active',
    issuer: 'https://idp.example',
    client_id: 'c',
    client_secret: 'enc:v1:sealed',
    authorization_url: 'https://idp.example/a',
    token_url: 'https://idp.example/t',
    userinfo_url: 'https://idp.example/u',
    jwks_url: 'https://idp.example/j',
    scopes: null,
    attribute_mapping: { email: 'email', name: 'name' },
    auto_provision: true,
    default_role_id: null,
    default_role_set_by: null,
    allowed_domains: null,
    enforce_sso: true,
    trusts_idp_mfa: false,
    generation: 1,
    created_at: new Date(),
    created_by: null,
    updated_by: null,
    ...overrides,
  };
}

function service(claimants: () => Promise<string[]>, oldest: LoginProviderRow | null) {
  const lookups: string[] = [];
  const repo = { verifiedClaimants: (domain: string) => (lookups.push(domain), claimants()) } as unknown as EmailDiscoveryRepository;
  const providers = { oldestActiveProvider: async () => oldest } as unknown as SsoLoginRepository;
  const tx = { withSystemContext: (_reason: string, fn: () => Promise<unknown>) => fn() } as unknown as TenantTransactionService;
  return { svc: new EmailDiscoveryService(repo, providers, tx), lookups };
}

describe('EmailDiscoveryService', () => {
  it('looks up only the normalised domain of the address', async () => {
    const { svc, lookups } = service(async () => [ORG], provider());
    const answer = await svc.discover('Ann.Example@Corp.Example');
    expect(answer).toEqual({ sso: { providerName: 'Corp', loginUrl: `/api/v1/sso/login/${ORG}`, enforceSSO: true } });
    expect(lookups).toEqual(['corp.example']);
  });

  it('answers null on a collision, without asking for a provider', async () => {
    const { svc } = service(async () => [ORG, 'another-org'], provider());
    expect(await svc.discover('a@corp.example')).toEqual({ sso: null });
  });

  it('answers null for a provider that could not start a login', async () => {
    expect(await service(async () => [ORG], provider({ client_secret: null })).svc.discover('a@corp.example')).toEqual({ sso: null });
    expect(await service(async () => [ORG], provider({ type: 'saml' })).svc.discover('a@corp.example')).toEqual({ sso: null });
  });

  it('answers null, not an error, when the database fails', async () => {
    const { svc } = service(async () => {
      throw new Error('connection lost');
    }, provider());
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      await expect(svc.discover('a@corp.example')).resolves.toEqual({ sso: null });
      expect(warned).toHaveBeenCalledWith({ err: expect.objectContaining({ message: 'connection lost' }) }, 'SSO discovery by email failed; answering without SSO');
    } finally {
      warned.mockRestore();
    }
  });

  it('answers null without any lookup for an address with no usable domain', async () => {
    const { svc, lookups } = service(async () => [ORG], provider());
    expect(await svc.discover('a@10.0.0.1')).toEqual({ sso: null });
    expect(lookups).toEqual([]);
  });
});
