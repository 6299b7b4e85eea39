import { randomBytes } from 'node:crypto';
import { tenantFixture } from '../../factories/tenant.factory';
import { RogueOidcIdp, startRogueOidcIdp } from '../../support/idp/rogue-oidc-idp';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { auditOf, BOOT_TIMEOUT_MS, insertProvider, ProviderInput, rogueEndpoints, roundTrip, verifyDomain } from '../sso-login/sso-login.kit';

/**
 * Issue 13 item 10a: an organization administrator points their organization's provider at an
 * IdP they run (the rogue IdP) and asserts email addresses, to learn from the outcome of the
 * sign-in which addresses have an account in some other tenant. For every configuration the
 * answer for an address held by another tenant's user must be the answer for an address nobody
 * holds: the same redirect and the same audit row (the administrator can read the audit log).
 */
describe('SSO sign-in does not reveal the users of other tenants', () => {
  let t: TestApp;
  let idp: RogueOidcIdp;
  let mine: ReturnType<typeof tenantFixture>;
  let ids: Record<string, string>;
  let theirs: ReturnType<typeof tenantFixture>;
  let other: Record<string, string>;
  let theirDomain: string;

  beforeAll(async () => {
    [t, idp] = await Promise.all([startTestApp(), startRogueOidcIdp()]);
    mine = tenantFixture();
    ids = await t.seed(mine);
    theirs = tenantFixture();
    other = await t.seed(theirs);
    theirDomain = theirs.emails.adminA.split('@')[1];
  }, BOOT_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.all([t.close(), idp.stop()]);
  });

  const nobody = () => `nobody-${randomBytes(4).toString('hex')}@${theirDomain}`;

  /** Organization A's only active provider, on the attacker's IdP. */
  async function orgProvider(overrides: ProviderInput = {}): Promise<string> {
    await ownerQuery(`UPDATE sso_providers SET status = 'inactive' WHERE org_id = $1`, [ids.orgA]);
    return insertProvider(t, { orgId: ids.orgA, ...rogueEndpoints(idp), defaultRoleId: ids.readerRoleA, defaultRoleSetBy: ids.adminA, ...overrides });
  }

  /** What the attacker observes for one asserted email: the redirect and the newest audit row about the provider. */
  async function outcome(path: string, provider: string, email: string, claims: Record<string, unknown> = { email_verified: true }) {
    idp.setClaims({ sub: `probe-${randomBytes(4).toString('hex')}`, email, ...claims });
    const cb = await roundTrip(t, path);
    const [audit] = await auditOf(provider, 'sso.login.rejected');
    const location = cb.location.replace(/#ssoCode=.*$/, '#ssoCode=<code>');
    return { location, audit: location.includes('#ssoCode=') ? null : audit?.details };
  }

  async function expectSameAnswer(overrides: ProviderInput, claims?: Record<string, unknown>) {
    const provider = await orgProvider(overrides);
    const path = `/api/v1/sso/login/${ids.orgA}`;
    const forUnknown = await outcome(path, provider, nobody(), claims);
    const forForeign = await outcome(path, provider, theirs.emails.readerA, claims);
    expect(forForeign).toEqual(forUnknown);
    return forUnknown;
  }

  it('answers the same for another tenant’s user and an unknown email when auto-provisioning is off', async () => {
    const answer = await expectSameAnswer({ autoProvision: false });
    expect(answer).toEqual({ location: '/login?error=user_not_found', audit: { code: 'user_not_found', reason: 'no_account_and_auto_provision_off' } });
  });

  it('answers the same when the provider has no default role', async () => {
    const answer = await expectSameAnswer({ defaultRoleId: null, defaultRoleSetBy: null });
    expect(answer.location).toBe('/login?error=default_role_required');
  });

  it('answers the same when the default role’s configurer can no longer grant it', async () => {
    await ownerQuery(`UPDATE users SET status = 'disabled' WHERE id = $1`, [ids.siteA1User]);
    try {
      const answer = await expectSameAnswer({ defaultRoleSetBy: ids.siteA1User });
      expect(answer.audit).toEqual({ code: 'default_role_required', reason: 'default_role_configurer_inactive' });
    } finally {
      await ownerQuery(`UPDATE users SET status = 'active' WHERE id = $1`, [ids.siteA1User]);
    }
  });

  it('answers the same when the IdP calls the email verified but the organization has not proved the domain', async () => {
    const answer = await expectSameAnswer({});
    expect(answer.location).toBe('/login?error=sso_domain_unverified');
    expect(await ownerQuery(`SELECT 1 FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [ids.orgA, other.readerA])).toEqual([]);
  });

  it('answers the same when the IdP says nothing about verification', async () => {
    const answer = await expectSameAnswer({}, { email_verified: undefined });
    expect(answer.location).toBe('/login?error=sso_domain_unverified');
  });

  it('answers the same for a disabled user of another tenant', async () => {
    await ownerQuery(`UPDATE users SET status = 'disabled' WHERE id = $1`, [other.adminB]);
    try {
      const provider = await orgProvider({ autoProvision: false });
      const path = `/api/v1/sso/login/${ids.orgA}`;
      expect(await outcome(path, provider, theirs.emails.adminB)).toEqual(await outcome(path, provider, nobody()));
    } finally {
      await ownerQuery(`UPDATE users SET status = 'active' WHERE id = $1`, [other.adminB]);
    }
  });

  it('treats a user of a sibling organization of the same partner like an unknown email too', async () => {
    const provider = await orgProvider({ autoProvision: false });
    const path = `/api/v1/sso/login/${ids.orgA}`;
    const ownDomain = mine.emails.adminA.split('@')[1];
    const forSibling = await outcome(path, provider, mine.emails.adminB);
    const forUnknown = await outcome(path, provider, `nobody@${ownDomain}`);
    expect(forSibling).toEqual(forUnknown);
    expect(forSibling.location).toBe('/login?error=user_not_found');
  });

  it('signs in both once the organization owns the domain: the foreign identity joins with the default role, untouched otherwise', async () => {
    await verifyDomain(ids.orgA, theirDomain);
    try {
      const [before] = await ownerQuery<{ name: string; password_hash: string; status: string }>(`SELECT name, password_hash, status FROM users WHERE id = $1`, [other.readerA]);
      const answer = await expectSameAnswer({});
      expect(answer).toEqual({ location: '/#ssoCode=<code>', audit: null });
      expect(await ownerQuery(`SELECT role_id FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [ids.orgA, other.readerA])).toEqual([
        { role_id: ids.readerRoleA },
      ]);
      const [after] = await ownerQuery(`SELECT name, password_hash, status FROM users WHERE id = $1`, [other.readerA]);
      expect(after).toEqual(before);
    } finally {
      await ownerQuery(`DELETE FROM sso_verified_domains WHERE org_id = $1`, [ids.orgA]);
    }
  });

  it('keeps no_org_access for a technician of the organization’s own partner who is not a member', async () => {
    const provider = await orgProvider({ autoProvision: false });
    await verifyDomain(ids.orgA, mine.emails.tech.split('@')[1]);
    try {
      const answer = await outcome(`/api/v1/sso/login/${ids.orgA}`, provider, mine.emails.tech);
      expect(answer).toEqual({ location: '/login?error=no_org_access', audit: { code: 'no_org_access', reason: 'no_organization_membership' } });
    } finally {
      await ownerQuery(`DELETE FROM sso_verified_domains WHERE org_id = $1`, [ids.orgA]);
    }
  });

  describe('partner sign-in', () => {
    async function partnerProvider(): Promise<string> {
      await ownerQuery(`UPDATE sso_providers SET status = 'inactive' WHERE partner_id = $1`, [ids.partner]);
      return insertProvider(t, { partnerId: ids.partner, ...rogueEndpoints(idp) });
    }

    it('answers the same for another partner’s technician and an unknown email', async () => {
      const provider = await partnerProvider();
      const path = `/api/v1/sso/login/partner/${ids.partner}`;
      const forForeign = await outcome(path, provider, theirs.emails.tech);
      const forUnknown = await outcome(path, provider, nobody());
      expect(forForeign).toEqual(forUnknown);
      expect(forUnknown).toEqual({ location: '/login?error=invite_required', audit: { code: 'invite_required', reason: 'no_account' } });
    });

    it('answers the same for a disabled user of another partner', async () => {
      await ownerQuery(`UPDATE users SET status = 'disabled' WHERE id = $1`, [other.techA]);
      try {
        const provider = await partnerProvider();
        const path = `/api/v1/sso/login/partner/${ids.partner}`;
        expect(await outcome(path, provider, theirs.emails.techA)).toEqual(await outcome(path, provider, nobody()));
      } finally {
        await ownerQuery(`UPDATE users SET status = 'active' WHERE id = $1`, [other.techA]);
      }
    });
  });
});
