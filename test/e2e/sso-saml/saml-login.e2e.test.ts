import { inflateRawSync } from 'node:zlib';
import request from 'supertest';
import { NAMEID_FORMAT_EMAIL, parseSamlXml, SAML_NS } from '../../../src/modules/sso/saml/xml/saml-xml.util';
import { tenantFixture, uniq } from '../../factories/tenant.factory';
import { createTestSamlIdp, ParsedAuthnRequest, TestSamlIdp } from '../../support/idp/saml-idp';
import { recordPgMessages } from '../../support/pg-messages';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, exchange, exchangeCodeOf, mintedThrough, verifyDomain } from '../sso-login/sso-login.kit';
import { ACS_URL, editedResponseFor, insertSamlProvider, lastRejection, postAcs, samlRoundTrip, spEntityIdOf, startSamlLogin } from './saml.kit';

const CLAIMS = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
const GROUPS = 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups';
const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

describe('SAML sign-in with a signing test IdP', () => {
  let t: TestApp;
  let idp: TestSamlIdp;
  let f: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;
  let domain: string;
  let orgProvider: string;
  let partnerProvider: string;

  beforeAll(async () => {
    t = await startTestApp();
    idp = createTestSamlIdp();
    f = tenantFixture();
    ids = await t.seed(f);
    domain = f.emails.adminA.split('@')[1];
    await verifyDomain(ids.orgA, domain);
    orgProvider = await insertSamlProvider({ orgId: ids.orgA, idp, name: 'Corp SAML', defaultRoleId: ids.readerRoleA, defaultRoleSetBy: ids.adminA });
    partnerProvider = await insertSamlProvider({ partnerId: ids.partner, idp, name: 'MSP SAML' });
  });
  afterAll(async () => {
    await t.close();
  });

  const me = (accessToken: string) => request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${accessToken}`);
  // NameIDs are compared exactly: the first sign-in links this one to Admin A.
  const adminNameId = () => f.emails.adminA.toUpperCase();
  const orgLogin = (query = '') => `/api/v1/sso/saml/login/${ids.orgA}${query}`;

  describe('login start', () => {
    it('redirects to the IdP SSO URL with a deflated AuthnRequest, the RelayState and the bound state cookie', async () => {
      const started = await startSamlLogin(t, orgLogin('?redirect=/devices'));
      expect(started.status).toBe(302);
      const url = new URL(started.location);
      expect(`${url.origin}${url.pathname}`).toBe(idp.ssoUrl);
      expect([...url.searchParams.keys()].sort()).toEqual(['RelayState', 'SAMLRequest']);

      // HTTP-Redirect binding: raw DEFLATE, then base64.
      const xml = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
      const authn = parseSamlXml(xml).documentElement!;
      expect(authn.getAttribute('Destination')).toBe(idp.ssoUrl);
      expect(authn.getAttribute('ProtocolBinding')).toBe('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST');
      expect(authn.getElementsByTagNameNS(SAML_NS.protocol, 'RequestedAuthnContext')).toHaveLength(0);
      expect(started.request).toMatchObject({ acsUrl: ACS_URL, issuer: spEntityIdOf(orgProvider), forceAuthn: false, nameIdFormat: NAMEID_FORMAT_EMAIL });
      const relayState = started.request!.relayState!;
      expect(relayState).toMatch(/^[A-Za-z0-9_-]{43}$/);

      expect(started.cookie).toMatch(new RegExp(`^svc_sso_state=${relayState}\\.[A-Za-z0-9_-]{43}$`));
      const attributes = started.setCookie.split(';').map((a) => a.trim().toLowerCase());
      expect(attributes).toEqual(expect.arrayContaining(['max-age=600', 'path=/api/v1/sso/saml/acs', 'httponly', 'samesite=lax']));

      const [session] = await ownerQuery<{ nonce: string; redirect_url: string; generation: number; purpose: string; ttl: number; provider_id: string }>(
        `SELECT nonce, redirect_url, generation, purpose, provider_id, extract(epoch FROM expires_at - created_at)::int AS ttl FROM sso_sessions WHERE state = $1`,
        [relayState],
      );
      expect(session).toEqual({ nonce: started.request!.id, redirect_url: '/devices', generation: 1, purpose: 'login', provider_id: orgProvider, ttl: 600 });
      const cached = await ownerQuery(`SELECT org_id, provider_id FROM saml_request_cache WHERE request_id = $1`, [started.request!.id]);
      expect(cached).toEqual([{ org_id: ids.orgA, provider_id: orgProvider }]);
    });

    it('reads its provider as a one-message lookup and records the round trip in one transaction', async () => {
      const pg = recordPgMessages(t.app);
      const messages = await pg.during(async () => expect((await startSamlLogin(t, orgLogin())).status).toBe(302));
      expect(messages.filter((m) => m.startsWith('BEGIN'))).toHaveLength(1);
      expect(messages.length).toBeLessThanOrEqual(5);
    });

    it('sends the configured NameID format and ForceAuthn', async () => {
      const org = (await t.seed({ organizations: [{ key: 'o', partner: 'p', name: `Org ${uniq()}` }], partners: [{ key: 'p', name: `P ${uniq()}` }] })).o;
      await insertSamlProvider({ orgId: org, idp, nameIdFormat: PERSISTENT, forceAuthn: true });
      const started = await startSamlLogin(t, `/api/v1/sso/saml/login/${org}`);
      expect(started.request).toMatchObject({ nameIdFormat: PERSISTENT, forceAuthn: true });
    });

    it('answers 404 without an active provider and points an OIDC organization to the OIDC route', async () => {
      const seeded = await t.seed({ partners: [{ key: 'p', name: `P ${uniq()}` }], organizations: [{ key: 'none', partner: 'p', name: `None ${uniq()}` }, { key: 'oidc', partner: 'p', name: `Oidc ${uniq()}` }] });
      const none = await startSamlLogin(t, `/api/v1/sso/saml/login/${seeded.none}`);
      expect(none).toMatchObject({ status: 404, body: { code: 'not_found' }, cookie: '' });
      await ownerQuery(`INSERT INTO sso_providers (org_id, name, type, status) VALUES ($1, 'OIDC', 'oidc', 'active')`, [seeded.oidc]);
      const oidc = await startSamlLogin(t, `/api/v1/sso/saml/login/${seeded.oidc}`);
      expect(oidc).toMatchObject({ status: 400, body: { code: 'sso_protocol_unsupported', loginUrl: `/api/v1/sso/login/${seeded.oidc}` }, cookie: '' });
    });

    it('refuses to start with a provider that lacks its certificate, and rejects ids that are not UUIDs', async () => {
      const org = (await t.seed({ partners: [{ key: 'p', name: `P ${uniq()}` }], organizations: [{ key: 'o', partner: 'p', name: `O ${uniq()}` }] })).o;
      await insertSamlProvider({ orgId: org, idp, certificate: null });
      const started = await startSamlLogin(t, `/api/v1/sso/saml/login/${org}`);
      expect(started).toMatchObject({ status: 400, body: { code: 'invalid_provider_configuration', missing: ['certificate'] }, cookie: '' });
      expect((await startSamlLogin(t, '/api/v1/sso/saml/login/not-a-uuid')).body).toMatchObject({ code: 'invalid_id' });
    });
  });

  describe('assertion consumer', () => {
    it('signs an existing user in through SP-initiated login and the #ssoCode exchange, and clears the cookie', async () => {
      const cb = await samlRoundTrip(t, orgLogin('?redirect=/devices?view=mine'), (req) => idp.buildResponseFor(req, { nameId: adminNameId(), sessionIndex: '_idp-session-1' }));
      expect(cb.status).toBe(302);
      expect(cb.location).toMatch(/^\/devices\?view=mine#ssoCode=[A-Za-z0-9_-]{43}$/);
      expect(cb.setCookie.join(';')).toMatch(/svc_sso_state=;.*Path=\/api\/v1\/sso\/saml\/acs.*Expires=Thu, 01 Jan 1970/);

      const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
      const who = await me(pair.body.accessToken).expect(200);
      expect(who.body.user.id).toBe(ids.adminA);
      expect(who.body.session).toMatchObject({ scope: 'organization', orgId: ids.orgA, mfa: false });

      const [identity] = await ownerQuery<{ external_id: string; email: string; profile: Record<string, unknown> }>(
        `SELECT external_id, email, profile FROM user_sso_identities WHERE user_id = $1 AND provider_id = $2`,
        [ids.adminA, orgProvider],
      );
      expect(identity).toMatchObject({ external_id: adminNameId(), email: adminNameId() });
      expect(identity.profile).toMatchObject({ issuer: idp.entityId, nameIdFormat: NAMEID_FORMAT_EMAIL, sessionIndex: '_idp-session-1' });

      // The request id is spent and the assertion recorded until it would have expired anyway.
      expect(await ownerQuery(`SELECT 1 FROM saml_request_cache WHERE request_id = $1`, [cb.started.request!.id])).toEqual([]);
      const [consumed] = await ownerQuery<{ provider_id: string; lifetime: number }>(
        `SELECT provider_id, extract(epoch FROM expires_at - consumed_at)::int AS lifetime FROM saml_consumed_assertions WHERE provider_id = $1 ORDER BY consumed_at DESC LIMIT 1`,
        [orgProvider],
      );
      expect(consumed.lifetime).toBeGreaterThanOrEqual(5 * 60);
      expect(consumed.lifetime).toBeLessThanOrEqual(6 * 60 + 5);
      const [login] = await auditOf(ids.adminA, 'sso.login');
      expect(login.details).toMatchObject({ providerId: orgProvider, matchedBy: expect.stringMatching(/^(email|identity)$/) });
    });

    it('accepts a response whose signature covers the whole response instead of the assertion alone', async () => {
      const cb = await samlRoundTrip(t, orgLogin(), (req) => idp.buildResponseFor(req, { nameId: f.emails.readerA, sign: 'response' }));
      expect(cb.location).toMatch(/^\/#ssoCode=/);
      const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
      expect((await me(pair.body.accessToken).expect(200)).body.user.id).toBe(ids.readerA);
    });

    it('provisions a new user on first sign-in with the default role, no password, and the SAML profile on the identity', async () => {
      const email = `saml-hire@${domain}`;
      const cb = await samlRoundTrip(t, orgLogin(), (req) =>
        idp.buildResponseFor(req, {
          nameId: 'persistent-7f3a',
          nameIdFormat: PERSISTENT,
          attributes: { [`${CLAIMS}/emailaddress`]: email, [`${CLAIMS}/name`]: 'Saml Hire', [GROUPS]: ['engineering', 'vpn-users', 'on-call'] },
        }),
      );
      expect(cb.location).toMatch(/^\/#ssoCode=/);
      const [user] = await ownerQuery<{ id: string; name: string; password_hash: string | null }>(`SELECT id, name, password_hash FROM users WHERE email = $1`, [email]);
      expect(user).toMatchObject({ name: 'Saml Hire', password_hash: null });
      expect(await ownerQuery(`SELECT role_id FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [ids.orgA, user.id])).toEqual([{ role_id: ids.readerRoleA }]);
      const [identity] = await ownerQuery<{ external_id: string; profile: { mapped: Record<string, unknown>; attributes: Record<string, string[]> } }>(
        `SELECT external_id, profile FROM user_sso_identities WHERE user_id = $1`,
        [user.id],
      );
      expect(identity.external_id).toBe('persistent-7f3a');
      expect(identity.profile.mapped).toEqual({ email, name: 'Saml Hire', firstName: null, lastName: null, groups: ['engineering', 'vpn-users', 'on-call'] });
      expect(identity.profile.attributes[GROUPS]).toEqual(['engineering', 'vpn-users', 'on-call']);
      const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
      expect((await me(pair.body.accessToken).expect(200)).body.user.id).toBe(user.id);
      const actions = (await ownerQuery<{ action: string }>(`SELECT action FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`, [user.id])).map((r) => r.action);
      expect(actions).toEqual(['sso.user.provisioned', 'sso.login']);
    });

    it('signs the same person in by the linked NameID after the IdP changes the email', async () => {
      const first = await samlRoundTrip(t, orgLogin(), (req) =>
        idp.buildResponseFor(req, { nameId: 'persistent-site-a1', nameIdFormat: PERSISTENT, attributes: { email: f.emails.siteA1 } }),
      );
      expect(first.location).toMatch(/#ssoCode=/);
      const second = await samlRoundTrip(t, orgLogin(), (req) =>
        idp.buildResponseFor(req, { nameId: 'persistent-site-a1', nameIdFormat: PERSISTENT, attributes: { email: `renamed-${uniq()}@${domain}` } }),
      );
      const pair = await exchange(t, exchangeCodeOf(second.location)!).expect(200);
      expect((await me(pair.body.accessToken).expect(200)).body.user.id).toBe(ids.siteA1User);
    });

    const table: [string, string, string, (user: { email: string; name: string }, mapped: Record<string, unknown>, value: string) => void][] = [
      [`${CLAIMS}/emailaddress`, 'email', 'x', (user, mapped, value) => expect([user.email, mapped.email]).toEqual([value, value])],
      ['urn:oid:0.9.2342.19200300.100.1.3', 'email', 'x', (user, mapped, value) => expect([user.email, mapped.email]).toEqual([value, value])],
      [`${CLAIMS}/name`, 'name', 'Display Name', (user, mapped, value) => expect([user.name, mapped.name]).toEqual([value, value])],
      ['urn:oid:2.16.840.1.113730.3.1.241', 'name', 'Display Name', (user, mapped, value) => expect([user.name, mapped.name]).toEqual([value, value])],
      [`${CLAIMS}/givenname`, 'firstName', 'Given', (user, mapped, value) => expect([user.name, mapped.firstName]).toEqual([value, value])],
      ['urn:oid:2.5.4.42', 'firstName', 'Given', (user, mapped, value) => expect([user.name, mapped.firstName]).toEqual([value, value])],
      [`${CLAIMS}/surname`, 'lastName', 'Family', (user, mapped, value) => expect([user.name, mapped.lastName]).toEqual([value, value])],
      ['urn:oid:2.5.4.4', 'lastName', 'Family', (user, mapped, value) => expect([user.name, mapped.lastName]).toEqual([value, value])],
      [GROUPS, 'groups', 'x', (_user, mapped) => expect(mapped.groups).toEqual(['g-one', 'g-two', 'g-three'])],
    ];

    it.each(table)('maps the spec table attribute %s to %s when provisioning', async (uri, field, sample, check) => {
      const email = `${field.toLowerCase()}-${uniq()}@${domain}`;
      const value = field === 'email' ? email : sample;
      const attributes: Record<string, string | string[]> = { [uri]: field === 'groups' ? ['g-one', 'g-two', 'g-three'] : value };
      if (field !== 'email') attributes.email = email;
      const cb = await samlRoundTrip(t, orgLogin(), (req) => idp.buildResponseFor(req, { nameId: `p-${uniq()}`, nameIdFormat: PERSISTENT, attributes }));
      expect(cb.location).toMatch(/#ssoCode=/);
      const [row] = await ownerQuery<{ email: string; name: string; profile: { mapped: Record<string, unknown> } }>(
        `SELECT u.email, u.name, i.profile FROM users u JOIN user_sso_identities i ON i.user_id = u.id WHERE lower(u.email) = lower($1)`,
        [email],
      );
      check(row, row.profile.mapped, value);
    });

    it("reads the provider's own attribute mapping before the spec table", async () => {
      // The organization's own administrator configures its IdP: a provider signs in only accounts its configurer has authority over.
      const seeded = await t.seed({
        partners: [{ key: 'p', name: `P ${uniq()}` }],
        organizations: [{ key: 'o', partner: 'p', name: `O ${uniq()}` }],
        roles: [{ key: 'admin', scope: 'organization', organization: 'o', name: 'Admin', permissions: ['*'] }],
        users: [{ key: 'admin', email: `admin-${uniq()}@example.com`, name: 'Admin', memberships: [{ organization: 'o', role: 'admin' }] }],
      });
      const org = seeded.o;
      const own = `own-${uniq()}.example`;
      await verifyDomain(org, own);
      const role = (await ownerQuery<{ id: string }>(`INSERT INTO roles (scope, org_id, name, permissions) VALUES ('organization', $1, 'Member', '{}') RETURNING id`, [org]))[0].id;
      await insertSamlProvider({
        orgId: org,
        idp,
        defaultRoleId: role,
        defaultRoleSetBy: seeded.admin,
        configuredBy: seeded.admin,
        attributeMapping: { email: 'User.email', name: 'User.name', groups: 'memberOf' },
      });
      const cb = await samlRoundTrip(t, `/api/v1/sso/saml/login/${org}`, (req) =>
        idp.buildResponseFor(req, {
          nameId: `p-${uniq()}`,
          nameIdFormat: PERSISTENT,
          attributes: { 'User.email': `mapped@${own}`, [`${CLAIMS}/emailaddress`]: `table@${own}`, 'User.name': 'Mapped Name', memberOf: ['m1', 'm2'] },
        }),
      );
      expect(cb.location).toMatch(/#ssoCode=/);
      const [row] = await ownerQuery<{ name: string; profile: { mapped: Record<string, unknown> } }>(
        `SELECT u.name, i.profile FROM users u JOIN user_sso_identities i ON i.user_id = u.id WHERE u.email = $1`,
        [`mapped@${own}`],
      );
      expect(row).toMatchObject({ name: 'Mapped Name', profile: { mapped: { groups: ['m1', 'm2'] } } });
    });

    it('signs a partner technician in to a partner-scope session through the partner route', async () => {
      const cb = await samlRoundTrip(t, `/api/v1/sso/saml/login/partner/${ids.partner}`, (req) => idp.buildResponseFor(req, { nameId: f.emails.tech }));
      const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
      const who = await me(pair.body.accessToken).expect(200);
      expect(who.body.user.id).toBe(ids.tech);
      expect(who.body.session).toMatchObject({ scope: 'partner', partnerId: ids.partner });
      expect(cb.started.request!.issuer).toBe(spEntityIdOf(partnerProvider));
    });

    it("points the OIDC partner route to the partner's SAML route when the partner's provider is SAML", async () => {
      const oidcRoute = await request(t.http).get(`/api/v1/sso/login/partner/${ids.partner}`).expect(400);
      expect(oidcRoute.body).toMatchObject({ code: 'sso_protocol_unsupported', loginUrl: `/api/v1/sso/saml/login/partner/${ids.partner}` });
      expect(oidcRoute.headers['set-cookie']).toBeUndefined();
    });

    it('applies the OIDC safeguards: an unverified domain cannot provision, and a partner never provisions', async () => {
      const before = await mintedThrough(orgProvider);
      const stranger = await samlRoundTrip(t, orgLogin(), (req) => idp.buildResponseFor(req, { nameId: `someone@unverified-${uniq()}.example` }));
      expect(stranger.location).toBe('/login?error=sso_domain_unverified');
      expect(await mintedThrough(orgProvider)).toEqual(before);
      const invite = await samlRoundTrip(t, `/api/v1/sso/saml/login/partner/${ids.partner}`, (req) => idp.buildResponseFor(req, { nameId: `new-tech-${uniq()}@${domain}` }));
      expect(invite.location).toBe('/login?error=invite_required');
    });

    it('counts IdP MFA only for a provider that trusts it and an authentication context that states it', async () => {
      const seeded = await t.seed({
        partners: [{ key: 'p', name: `P ${uniq()}` }],
        organizations: [{ key: 'o', partner: 'p', name: `O ${uniq()}` }],
        roles: [{ key: 'r', scope: 'organization', organization: 'o', name: 'Member', permissions: ['devices:read'] }],
      });
      await ownerQuery(`INSERT INTO organization_memberships (org_id, user_id, role_id) VALUES ($1, $2, $3)`, [seeded.o, ids.readerA, seeded.r]);
      await verifyDomain(seeded.o, domain);
      // The organization's only member configured its IdP (a provider signs in only accounts its configurer covers).
      await insertSamlProvider({ orgId: seeded.o, idp, trustsIdpMfa: true, configuredBy: ids.readerA });
      const withContext = (context: string) => (req: ParsedAuthnRequest) =>
        editedResponseFor(idp, req, { nameId: f.emails.readerA }, (xml) => xml.replace('urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport', context));
      const sessionMfa = async (location: string) => {
        const pair = await exchange(t, exchangeCodeOf(location)!).expect(200);
        return (await me(pair.body.accessToken).expect(200)).body.session.mfa;
      };

      const trustedMfa = await samlRoundTrip(t, `/api/v1/sso/saml/login/${seeded.o}`, withContext('https://refeds.org/profile/mfa'));
      expect(await sessionMfa(trustedMfa.location)).toBe(true);
      const trustedPassword = await samlRoundTrip(t, `/api/v1/sso/saml/login/${seeded.o}`, (req) => idp.buildResponseFor(req, { nameId: f.emails.readerA }));
      expect(await sessionMfa(trustedPassword.location)).toBe(false);
      const untrustedMfa = await samlRoundTrip(t, orgLogin(), withContext('http://schemas.microsoft.com/claims/multipleauthn'));
      expect(await sessionMfa(untrustedMfa.location)).toBe(false);
    });
  });

  describe('the browser binding and the provider generation, as for OIDC', () => {
    it('refuses a post without the state cookie and leaves the login session usable', async () => {
      const started = await startSamlLogin(t, orgLogin());
      const response = idp.buildResponseFor(started.request!, { nameId: adminNameId() });
      const unbound = await postAcs(t, { SAMLResponse: response, RelayState: started.request!.relayState });
      expect(unbound.location).toBe('/login?error=invalid_callback');
      expect(unbound.setCookie).toEqual([]);
      expect(await lastRejection(orgProvider)).toEqual({ code: 'invalid_callback', reason: 'state_cookie_missing' });
      const bound = await postAcs(t, { SAMLResponse: response, RelayState: started.request!.relayState }, started.cookie);
      expect(bound.location).toMatch(/^\/#ssoCode=/);
    });

    it('refuses an IdP-initiated response, which names no login session', async () => {
      const unsolicited = idp.buildResponse({ nameId: adminNameId(), acsUrl: ACS_URL, spEntityId: spEntityIdOf(orgProvider) });
      const answer = await postAcs(t, { SAMLResponse: unsolicited });
      expect(answer.location).toBe('/login?error=invalid_callback');
    });

    it('invalidates an attempt when the provider is reconfigured or deactivated while it is in flight', async () => {
      const started = await startSamlLogin(t, orgLogin());
      await ownerQuery(`UPDATE sso_providers SET generation = generation + 1 WHERE id = $1`, [orgProvider]);
      const changed = await postAcs(t, { SAMLResponse: idp.buildResponseFor(started.request!, { nameId: adminNameId() }), RelayState: started.request!.relayState }, started.cookie);
      expect(changed.location).toBe('/login?error=sso_config_changed');

      const again = await startSamlLogin(t, orgLogin());
      await ownerQuery(`UPDATE sso_providers SET status = 'inactive' WHERE id = $1`, [orgProvider]);
      try {
        const inactive = await postAcs(t, { SAMLResponse: idp.buildResponseFor(again.request!, { nameId: adminNameId() }), RelayState: again.request!.relayState }, again.cookie);
        expect(inactive.location).toBe('/login?error=sso_provider_inactive');
      } finally {
        await ownerQuery(`UPDATE sso_providers SET status = 'active' WHERE id = $1`, [orgProvider]);
      }
    });
  });

  describe('SP metadata', () => {
    it('serves valid XML naming the default entity id (the metadata URL), the HTTP-POST ACS, emailAddress and WantAssertionsSigned', async () => {
      const res = await request(t.http).get(`/api/v1/sso/saml/metadata/${orgProvider}`).buffer(true).parse((r, cb) => {
        let body = '';
        r.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        r.on('end', () => cb(null, body));
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/samlmetadata\+xml/);
      const root = parseSamlXml(res.body as string).documentElement!;
      expect(root.getAttribute('entityID')).toBe(spEntityIdOf(orgProvider));
      const sp = root.getElementsByTagNameNS(SAML_NS.metadata, 'SPSSODescriptor')[0];
      expect(sp.getAttribute('WantAssertionsSigned')).toBe('true');
      expect(sp.getElementsByTagNameNS(SAML_NS.metadata, 'NameIDFormat')[0].textContent).toBe(NAMEID_FORMAT_EMAIL);
      const acs = sp.getElementsByTagNameNS(SAML_NS.metadata, 'AssertionConsumerService')[0];
      expect([acs.getAttribute('Binding'), acs.getAttribute('Location')]).toEqual(['urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', ACS_URL]);
    });

    it('answers 404 for an unknown provider and for an OIDC provider', async () => {
      const [oidc] = await ownerQuery<{ id: string }>(`INSERT INTO sso_providers (org_id, name, type) VALUES ($1, 'OIDC', 'oidc') RETURNING id`, [ids.orgB]);
      await request(t.http).get(`/api/v1/sso/saml/metadata/${oidc.id}`).expect(404);
      await request(t.http).get('/api/v1/sso/saml/metadata/00000000-0000-4000-8000-000000000000').expect(404);
    });
  });

  describe('discovery and the check route (spec 1.5.5)', () => {
    it('answers discovery by email with no SSO for a SAML provider, while /sso/check names the SAML login route', async () => {
      const seeded = await t.seed({ partners: [{ key: 'p', name: `P ${uniq()}` }], organizations: [{ key: 'o', partner: 'p', name: `O ${uniq()}` }] });
      const own = `disc-${uniq()}.example`;
      await verifyDomain(seeded.o, own);
      const provider = await insertSamlProvider({ orgId: seeded.o, idp, name: 'Enforcing SAML', enforceSso: true });
      const discovery = await request(t.http).post('/api/v1/auth/sso-discovery').send({ email: `someone@${own}` }).expect(200);
      expect(discovery.body).toEqual({ sso: null });
      const check = await request(t.http).get(`/api/v1/sso/check/${seeded.o}`).expect(200);
      expect(check.body).toEqual({
        ssoEnabled: true,
        provider: { id: provider, name: 'Enforcing SAML', type: 'saml' },
        enforceSSO: true,
        loginUrl: `/api/v1/sso/saml/login/${seeded.o}`,
      });
      const oidcRoute = await request(t.http).get(`/api/v1/sso/login/${seeded.o}`).expect(400);
      expect(oidcRoute.body).toMatchObject({ code: 'sso_protocol_unsupported', loginUrl: `/api/v1/sso/saml/login/${seeded.o}` });
    });
  });
});

describe('SAML with a deployment-wide SP entity id', () => {
  let t: TestApp;
  let idp: TestSamlIdp;
  let ids: Record<string, string>;
  let f: ReturnType<typeof tenantFixture>;
  const entityId = 'urn:example:rmm:sp';

  beforeAll(async () => {
    t = await startTestApp({ SAML_SP_ENTITY_ID: entityId });
    idp = createTestSamlIdp();
    f = tenantFixture();
    ids = await t.seed(f);
    await verifyDomain(ids.orgA, f.emails.adminA.split('@')[1]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('uses SAML_SP_ENTITY_ID in the metadata, as the AuthnRequest issuer and as the audience it requires', async () => {
    const provider = await insertSamlProvider({ orgId: ids.orgA, idp });
    const metadata = await request(t.http).get(`/api/v1/sso/saml/metadata/${provider}`).buffer(true).parse((r, cb) => {
      let body = '';
      r.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      r.on('end', () => cb(null, body));
    });
    expect(parseSamlXml(metadata.body as string).documentElement!.getAttribute('entityID')).toBe(entityId);

    const ok = await samlRoundTrip(t, `/api/v1/sso/saml/login/${ids.orgA}`, (req) => {
      expect(req.issuer).toBe(entityId);
      return idp.buildResponseFor(req, { nameId: f.emails.adminA });
    });
    expect(ok.location).toMatch(/#ssoCode=/);
    const wrong = await samlRoundTrip(t, `/api/v1/sso/saml/login/${ids.orgA}`, (req) =>
      idp.buildResponseFor(req, { nameId: f.emails.adminA, audience: spEntityIdOf(provider) }),
    );
    expect(wrong.location).toBe('/login?error=sso_error');
    expect(await lastRejection(provider)).toEqual({ code: 'sso_error', reason: 'audience_mismatch' });
  });
});
