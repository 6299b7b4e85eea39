import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { createTestSamlIdp, TestSamlIdp } from '../../support/idp/saml-idp';
import { browserlessAuthorize } from '../../support/idp/oidc-op';
import { RogueOidcIdp, startRogueOidcIdp } from '../../support/idp/rogue-oidc-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { BOOT_TIMEOUT_MS, callback, exchange, exchangeCodeOf, insertProvider, rogueEndpoints, roundTrip, verifyDomain } from '../sso-login/sso-login.kit';
import { insertSamlProvider, samlRoundTrip } from '../sso-saml/saml.kit';

/**
 * Issue 13 item 1: the post-login target of an SSO sign-in is where the exchange code goes (in
 * the fragment), so an off-origin target hands the victim's tokens to the attacker's page. Each
 * test is the attacker's request: a login start with a crafted `redirect`, the IdP round trip
 * as the victim, and the final Location the victim's browser would follow.
 */
describe('open redirect through the post-login target of an SSO sign-in', () => {
  let t: TestApp;
  let idp: RogueOidcIdp;
  let saml: TestSamlIdp;
  let f: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;

  // Origins the service could be served from; a browser resolves Location against the callback URL.
  const ORIGINS = ['http://localhost:3000/api/v1/sso/callback', 'https://rmm.example.com/api/v1/sso/saml/acs', 'https://rmm.example.com:8443/'];

  /** The Location a browser would follow stays on the service's origin, whatever the origin is. */
  function expectSameOriginPath(location: string): void {
    expect(location).toMatch(/^\/(?![/\\])/);
    expect(location).not.toMatch(/[\\\t\n\r]/);
    for (const base of ORIGINS) {
      expect(new URL(location, base).origin).toBe(new URL(base).origin);
    }
    const path = location.split('#')[0];
    // Still on the origin once a consumer percent-decodes it.
    expect(decodeURIComponent(path)).toMatch(/^\/(?![/\\])/);
    for (const base of ORIGINS) {
      expect(new URL(decodeURIComponent(path), base).origin).toBe(new URL(base).origin);
    }
  }

  beforeAll(async () => {
    [t, idp] = await Promise.all([startTestApp(), startRogueOidcIdp()]);
    saml = createTestSamlIdp();
    f = tenantFixture();
    ids = await t.seed(f);
    const domain = f.emails.adminA.split('@')[1];
    await verifyDomain(ids.orgA, domain);
    await verifyDomain(ids.orgB, domain);
    await insertProvider(t, { orgId: ids.orgA, ...rogueEndpoints(idp) });
    await insertProvider(t, { partnerId: ids.partner, ...rogueEndpoints(idp) });
    await insertSamlProvider({ orgId: ids.orgB, idp: saml });
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), idp.stop()]);
  });

  it('the reported request (/.//evil.example/steal) on an organization OIDC sign-in ends on the service origin, and its code is not for evil.example', async () => {
    idp.setClaims({ sub: 'victim-a', email: f.emails.adminA, email_verified: true });
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}?redirect=/.//evil.example/steal`);
    expect(cb.status).toBe(302);
    expect(cb.location).toMatch(/#ssoCode=/);
    expect(cb.location).not.toMatch(/^\/\//);
    expectSameOriginPath(cb.location);
    const pair = await exchange(t, exchangeCodeOf(cb.location)!).expect(200);
    const me = await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${pair.body.accessToken}`).expect(200);
    expect(me.body.user.id).toBe(ids.adminA);
  });

  it('the reported request on a partner OIDC sign-in ends on the service origin', async () => {
    idp.setClaims({ sub: 'victim-tech', email: f.emails.tech, email_verified: true });
    const cb = await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}?redirect=/.//evil.example/steal`);
    expect(cb.location).toMatch(/#ssoCode=/);
    expectSameOriginPath(cb.location);
  });

  it('the reported request on a SAML sign-in ends on the service origin', async () => {
    const cb = await samlRoundTrip(t, `/api/v1/sso/saml/login/${ids.orgB}?redirect=/.//evil.example/steal`, (req) => saml.buildResponseFor(req, { nameId: f.emails.adminB }));
    expect(cb.status).toBe(302);
    expect(cb.location).toMatch(/#ssoCode=/);
    expectSameOriginPath(cb.location);
  });

  const payloads = [
    '/.//evil.example/steal',
    '//evil.example/steal',
    '/\\evil.example/steal',
    '/%2F%2Fevil.example/steal',
    '/%5Cevil.example/steal',
    '/%5C%5Cevil.example/steal',
    '/\t/evil.example/steal',
    '/\n/evil.example/steal',
    'https:evil.example/steal',
    'HTTPS://evil.example/steal',
    'hTtPs://evil.example/steal',
    '/..//evil.example/steal',
    '/a/../..//evil.example/steal',
    '/%2e%2e//evil.example/steal',
    '/.%2e/%2Fevil.example/steal',
    '\\\\evil.example/steal',
    'javascript:alert(document.domain)',
  ];

  it.each(payloads)('an organization OIDC sign-in with redirect=%j ends on a same-origin path', async (payload) => {
    idp.setClaims({ sub: 'victim-a', email: f.emails.adminA, email_verified: true });
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}?redirect=${encodeURIComponent(payload)}`);
    expect(cb.location).toMatch(/#ssoCode=/);
    expectSameOriginPath(cb.location);
  });

  it.each(payloads)('a partner OIDC sign-in with redirect=%j ends on a same-origin path', async (payload) => {
    idp.setClaims({ sub: 'victim-tech', email: f.emails.tech, email_verified: true });
    const cb = await roundTrip(t, `/api/v1/sso/login/partner/${ids.partner}?redirect=${encodeURIComponent(payload)}`);
    expect(cb.location).toMatch(/#ssoCode=/);
    expectSameOriginPath(cb.location);
  });

  it.each(payloads)('a SAML sign-in with redirect=%j ends on a same-origin path', async (payload) => {
    const cb = await samlRoundTrip(t, `/api/v1/sso/saml/login/${ids.orgB}?redirect=${encodeURIComponent(payload)}`, (req) => saml.buildResponseFor(req, { nameId: f.emails.adminB }));
    expect(cb.location).toMatch(/#ssoCode=/);
    expectSameOriginPath(cb.location);
  });

  it('an off-origin target already stored in a login session (written before the fix) is not followed', async () => {
    idp.setClaims({ sub: 'victim-a', email: f.emails.adminA, email_verified: true });
    const started = await request(t.http).get(`/api/v1/sso/login/${ids.orgA}`).set('X-Forwarded-For', '10.99.0.1');
    const state = new URL(started.headers.location).searchParams.get('state');
    await ownerQuery(`UPDATE sso_sessions SET redirect_url = '//evil.example/steal' WHERE state = $1`, [state]);
    const cookie = ([] as string[]).concat(started.headers['set-cookie']).find((c) => c.startsWith('svc_sso_state='))!.split(';')[0];
    const cb = await callback(t, await browserlessAuthorize(started.headers.location), cookie);
    expect(cb.location).toMatch(/^\/#ssoCode=/);
  });

  it('keeps an ordinary same-origin target with its query', async () => {
    idp.setClaims({ sub: 'victim-a', email: f.emails.adminA, email_verified: true });
    const cb = await roundTrip(t, `/api/v1/sso/login/${ids.orgA}?redirect=${encodeURIComponent('/devices?site=a1&page=2')}`);
    expect(cb.location).toMatch(/^\/devices\?site=a1&page=2#ssoCode=/);
  });
});
