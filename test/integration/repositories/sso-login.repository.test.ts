import { randomBytes, randomUUID } from 'node:crypto';
import { SsoLoginRepository, type NewLoginSession } from '../../../src/modules/sso/login/sso-login.repository';
import { startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * The login round trip's state. The callback has no tenant yet, so it consumes the state in
 * system context (what the public routes use); which tenant's session it was is read from the row.
 */
describe('SSO login sessions', () => {
  let m: Medium;
  let t: TenantRows;
  let logins: SsoLoginRepository;
  let providerId: string;

  const session = (over: Partial<NewLoginSession> = {}): NewLoginSession => ({
    orgId: t.orgA,
    partnerId: null,
    providerId,
    state: randomBytes(16).toString('hex'),
    nonce: 'nonce',
    codeVerifier: 'verifier',
    redirectUrl: '/after',
    generation: 3,
    purpose: 'login',
    linkUserId: null,
    linkSessionId: null,
    issRequired: true,
    ttlSeconds: 600,
    ...over,
  });

  beforeAll(async () => {
    m = await startMedium([SsoLoginRepository]);
    logins = m.get(SsoLoginRepository);
    t = await seedTenants(m.owner);
    providerId = randomUUID();
    await m.owner.query(
      `INSERT INTO sso_providers (id, org_id, name, type, status, issuer, client_id, generation, created_by)
       VALUES ($1, $2, 'IdP ' || $3, 'oidc', 'active', 'https://idp.example', 'client', 3, $4)`,
      [providerId, t.orgA, t.label, t.adminA],
    );
  });
  afterAll(() => m.close());

  describe('SsoLoginRepository.consumeLoginSession', () => {
    it('answers the session and its provider as two records, each with exactly its own columns, once', async () => {
      const s = session();
      await m.system(() => logins.insertLoginSession(s));
      const consumed = await m.system(() => logins.consumeLoginSession(s.state));
      expect(consumed!.session).toEqual({
        id: expect.any(String),
        org_id: t.orgA,
        partner_id: null,
        provider_id: providerId,
        state: s.state,
        nonce: 'nonce',
        code_verifier: 'verifier',
        redirect_url: '/after',
        generation: 3,
        purpose: 'login',
        link_user_id: null,
        link_session_id: null,
        iss_required: true,
      });
      expect(Object.keys(consumed!.provider!).sort()).toEqual(
        [
          'id', 'org_id', 'partner_id', 'name', 'type', 'status', 'issuer', 'client_id', 'client_secret', 'authorization_url', 'token_url',
          'userinfo_url', 'jwks_url', 'scopes', 'attribute_mapping', 'auto_provision', 'default_role_id', 'default_role_set_by', 'allowed_domains',
          'enforce_sso', 'trusts_idp_mfa', 'generation', 'created_at', 'created_by', 'updated_by',
        ].sort(),
      );
      expect(consumed!.provider).toMatchObject({
        id: providerId,
        org_id: t.orgA,
        partner_id: null,
        name: `IdP ${t.label}`,
        type: 'oidc',
        status: 'active',
        issuer: 'https://idp.example',
        attribute_mapping: { email: 'email', name: 'name' },
        auto_provision: true,
        generation: 3,
        created_by: t.adminA,
        updated_by: null,
      });
      expect(consumed!.provider!.created_at).toBeInstanceOf(Date);
      expect(await m.system(() => logins.consumeLoginSession(s.state))).toBeNull();
    });

    it('leaves an expired session to be discarded, and answers null for a state never issued', async () => {
      const s = session();
      await m.system(() => logins.insertLoginSession(s));
      await m.owner.query(`UPDATE sso_sessions SET expires_at = now() - interval '1 second' WHERE state = $1`, [s.state]);
      expect(await m.system(() => logins.consumeLoginSession(s.state))).toBeNull();
      expect(await m.system(() => logins.discardExpiredLoginSession(s.state))).toMatchObject({ state: s.state, provider_id: providerId });
      expect(await m.system(() => logins.consumeLoginSession(randomBytes(16).toString('hex')))).toBeNull();
    });

    it('never consumes a session through another tenant’s transaction', async () => {
      const s = session();
      await m.system(() => logins.insertLoginSession(s));
      expect(await m.as({ scope: 'organization', orgIds: [t.orgB], partnerIds: [], userId: t.adminB, partnerWide: false, siteIds: null }, () => logins.consumeLoginSession(s.state))).toBeNull();
      expect((await m.owner.query(`SELECT count(*)::int AS n FROM sso_sessions WHERE state = $1`, [s.state])).rows[0].n).toBe(1);
    });
  });

  describe('SsoLoginRepository.oldestActiveProviderWithSaml', () => {
    it('answers the oldest active provider with its SAML columns, none for an OIDC provider, and nothing once the provider is inactive', async () => {
      const oidc = await m.systemLookup(() => logins.oldestActiveProviderWithSaml({ orgId: t.orgA }));
      expect(oidc).toEqual({ provider: await m.systemLookup(() => logins.oldestActiveProvider({ orgId: t.orgA })), saml: null });
      expect(oidc!.provider.id).toBe(providerId);

      const saml = randomUUID();
      await m.owner.query(
        `INSERT INTO sso_providers (id, partner_id, name, type, status, auto_provision, entity_id, sso_url, certificate, force_authn)
         VALUES ($1, $2, 'SAML ' || $3, 'saml', 'active', false, 'urn:idp', 'https://idp.example/sso', 'PEM', true)`,
        [saml, t.partnerQ, t.label],
      );
      expect(await m.systemLookup(() => logins.oldestActiveProviderWithSaml({ partnerId: t.partnerQ }))).toEqual({
        provider: expect.objectContaining({ id: saml, partner_id: t.partnerQ, type: 'saml', created_at: expect.any(Date) }),
        saml: { entity_id: 'urn:idp', sso_url: 'https://idp.example/sso', certificate: 'PEM', name_id_format: null, force_authn: true },
      });
      await m.owner.query(`UPDATE sso_providers SET status = 'inactive' WHERE id = $1`, [saml]);
      expect(await m.systemLookup(() => logins.oldestActiveProviderWithSaml({ partnerId: t.partnerQ }))).toBeNull();
    });
  });
});
