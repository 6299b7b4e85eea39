import request from 'supertest';
import { PASSWORD, tenantFixture, uniq } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { ERROR, GROUP, PATCH, scimClient, USER } from '../scim/scim.kit';


/**
 * The security review's SCIM findings, replayed as the attacker sent them: an organization
 * administrator holding only `organizations:read` and `organizations:write` makes a SCIM
 * connection, and its token acts for them. Whatever the token changes of a person — their
 * sign-in email, userName, name, status, role — needs that administrator's authority over
 * everything the person holds (docs/security.md, "Acting on a person").
 */
describe('a SCIM connection acts on a person only within its administrator’s authority', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  const f = tenantFixture();
  const domain = f.emails.adminA.split('@')[1];
  const otherDomain = `${uniq('other')}.example`;
  f.partners!.push({ key: 'partner2', name: `Other MSP ${uniq()}` });
  f.organizations!.push({ key: 'orgC', partner: 'partner2', name: `Org C ${uniq()}` });
  f.roles!.push(
    { key: 'writerRoleA', scope: 'organization', organization: 'orgA', name: 'IT', permissions: ['organizations:read', 'organizations:write'] },
    { key: 'viewerRoleA', scope: 'organization', organization: 'orgA', name: 'Viewer', permissions: ['organizations:read'] },
    { key: 'joinerRoleA', scope: 'organization', organization: 'orgA', name: 'Joiner', permissions: ['organizations:read'] },
    { key: 'onboardingRole', scope: 'partner', partner: 'partner', name: 'Onboarding', permissions: ['organizations:read', 'organizations:write'] },
    { key: 'tech2Role', scope: 'partner', partner: 'partner2', name: 'Admin', permissions: ['*'] },
  );
  const who = {
    mallory: `mallory@${domain}`,
    viewer: `viewer@${domain}`,
    leaver: `leaver@${domain}`,
    otherTech: `other-tech@${domain}`,
    onboarding: `onboarding-${uniq()}@example.com`,
    elsewhere: `taken@${otherDomain}`,
  };
  f.users!.push(
    { key: 'mallory', email: who.mallory, name: 'Mallory', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'writerRoleA' }] },
    { key: 'viewer', email: who.viewer, name: 'Viewer', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'viewerRoleA' }] },
    { key: 'leaver', email: who.leaver, name: 'Leaver', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'viewerRoleA' }] },
    // A technician of another MSP who is also a viewer of organization A.
    { key: 'otherTech', email: who.otherTech, name: 'Other tech', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'viewerRoleA' }], partnerMembership: { partner: 'partner2', role: 'tech2Role' } },
    { key: 'onboarding', email: who.onboarding, name: 'Onboarding', password: PASSWORD, partnerMembership: { partner: 'partner', role: 'onboardingRole', orgAccess: 'all' } },
    { key: 'elsewhere', email: who.elsewhere, name: 'Elsewhere', password: PASSWORD, memberships: [{ organization: 'orgC', role: 'adminRoleB' }] },
  );
  // adminRoleB belongs to orgB; orgC's member needs a role of orgC.
  f.roles!.push({ key: 'adminRoleC', scope: 'organization', organization: 'orgC', name: 'Admin', permissions: ['*'] });
  f.users![f.users!.length - 1].memberships = [{ organization: 'orgC', role: 'adminRoleC' }];

  const admin = async (userId: string) => {
    const bearer = await t.token(userId, { mfa: true });
    return {
      post: (path: string, body: object = {}) => request(t.http).post(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`).send(body),
      put: (path: string, body: object) => request(t.http).put(`/api/v1${path}`).set('Authorization', `Bearer ${bearer}`).send(body),
    };
  };
  const scim = (token: string) => scimClient(t.http, token);
  const connectionOf = async (userId: string, body: object = {}) => {
    const res = await (await admin(userId)).post('/scim/connections', { name: `IdP ${uniq()}`, ...body });
    expect(res.status).toBe(201);
    return res.body as { token: string; connection: { id: string } };
  };
  const replace = (path: string | undefined, value: unknown) => ({ schemas: [PATCH], Operations: [{ op: 'Replace', ...(path ? { path } : {}), value }] });
  const emailOf = async (userId: string) => (await ownerQuery<{ email: string }>(`SELECT email FROM users WHERE id = $1`, [userId]))[0].email;
  const membershipOf = async (orgId: string, userId: string) =>
    (await ownerQuery<{ role_id: string; suspended_at: Date | null }>(`SELECT role_id, suspended_at FROM organization_memberships WHERE org_id = $1 AND user_id = $2`, [orgId, userId]))[0];

  let mallory: ReturnType<typeof scim>;

  beforeAll(async () => {
    t = await startTestApp({ PRINCIPAL_CACHE_TTL_MS: '0' });
    ids = await t.seed(f);
    await ownerQuery(`UPDATE users SET totp_secret = 'x' WHERE id = ANY ($1::uuid[])`, [[ids.mallory, ids.onboarding]]);
    await ownerQuery(
      `INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_checked_at, last_seen_at) VALUES ($1, $2, 'x', true, now(), now(), now()), ($3, $4, 'y', true, now(), now(), now())`,
      [ids.orgA, domain, ids.orgC, otherDomain],
    );
    mallory = scim((await connectionOf(ids.mallory)).token);
  });
  afterAll(async () => {
    await t.close();
  });

  describe("finding 1: the owner's sign-in email cannot be taken over", () => {
    const attacks: [string, () => object, 'patch' | 'put'][] = [
      ['a userName replace', () => replace('userName', 'mallory@evil.example'), 'patch'],
      ['a path-less Replace', () => replace(undefined, { userName: 'mallory@evil.example', emails: [{ value: 'mallory@evil.example', type: 'work', primary: true }] }), 'patch'],
      ['an emails[type eq "work"].value replace', () => replace('emails[type eq "work"].value', 'mallory@evil.example'), 'patch'],
      ['a PUT', () => ({ schemas: [USER], userName: 'mallory@evil.example', emails: [{ value: 'mallory@evil.example', type: 'work', primary: true }], active: true }), 'put'],
    ];
    it.each(attacks)('%s on the owner is refused 403 and the account keeps its email', async (_name, body, verb) => {
      const res = await mallory[verb](`/Users/${ids.adminA}`, body());
      expect(res.status).toBe(403);
      expect(res.body.schemas).toEqual([ERROR]);
      expect(await emailOf(ids.adminA)).toBe(f.emails.adminA);
      // The attacker's reset link has nowhere to go.
      await request(t.http).post('/api/v1/auth/forgot-password').send({ email: 'mallory@evil.example' }).expect(200);
      expect(await ownerQuery(`SELECT 1 FROM password_reset_tokens WHERE user_id = $1`, [ids.adminA])).toHaveLength(0);
    });

    it('refuses to move the sign-in email of a person who also belongs to another MSP, though the administrator covers their role here', async () => {
      const res = await mallory.patch(`/Users/${ids.otherTech}`, replace('emails[type eq "work"].value', `moved-${uniq()}@${domain}`));
      expect(res.status).toBe(403);
      expect(await emailOf(ids.otherTech)).toBe(who.otherTech);
    });

    it("keeps a connection's userName apart from the sign-in email", async () => {
      const res = await mallory.patch(`/Users/${ids.viewer}`, replace('userName', 'VIEWER-UPN'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ userName: 'VIEWER-UPN', emails: [{ value: who.viewer }] });
      expect(await emailOf(ids.viewer)).toBe(who.viewer);
      const found = await mallory.get(`/Users?filter=${encodeURIComponent('userName eq "viewer-upn"')}`).expect(200);
      expect(found.body.Resources.map((r: { id: string }) => r.id)).toEqual([ids.viewer]);
    });

    it('moves the sign-in email of an account the organization owns, only to an address on its verified domain', async () => {
      const moved = `viewer-${uniq()}@${domain}`;
      const res = await mallory.patch(`/Users/${ids.viewer}`, replace('emails[type eq "work"].value', moved));
      expect(res.status).toBe(200);
      expect(await emailOf(ids.viewer)).toBe(moved);
      const off = await mallory.patch(`/Users/${ids.viewer}`, replace('emails[type eq "work"].value', `viewer@${uniq('free')}.example`));
      expect(off.status).toBe(403);
      expect(await emailOf(ids.viewer)).toBe(moved);
    });

    it('a partner connection made by an onboarding technician cannot touch the partner administrator', async () => {
      const partnerScim = scim((await connectionOf(ids.onboarding, { ownerScope: 'partner' })).token);
      for (const body of [replace('userName', 'mallory@evil.example'), replace('active', 'False')]) {
        expect((await partnerScim.patch(`/Users/${ids.tech}`, body)).status).toBe(403);
      }
      expect(await emailOf(ids.tech)).toBe(f.emails.tech);
      const [pm] = await ownerQuery<{ suspended_at: Date | null }>(`SELECT suspended_at FROM partner_memberships WHERE user_id = $1`, [ids.tech]);
      expect(pm.suspended_at).toBeNull();
    });
  });

  describe('finding 2: deprovisioning and demotion need authority over the person', () => {
    it('refuses active "False" and DELETE on the owner, who stays active and signed in', async () => {
      const session = await t.token(ids.adminA);
      expect((await mallory.patch(`/Users/${ids.adminA}`, replace('active', 'False'))).status).toBe(403);
      expect((await mallory.delete(`/Users/${ids.adminA}`)).status).toBe(403);
      expect((await membershipOf(ids.orgA, ids.adminA)).suspended_at).toBeNull();
      await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${session}`).expect(200);
    });

    it("a group mapped to the administrator's own role does not turn the owner into it", async () => {
      // The owner saved the mapping on Mallory's connection; applying it to the owner is Mallory's act.
      const malloryConnection = await connectionOf(ids.mallory);
      await (await admin(ids.adminA)).put(`/scim/connections/${malloryConnection.connection.id}/group-mappings`, { mappings: [{ group: 'Demoted', roleId: ids.writerRoleA }] }).expect(200);
      await scim(malloryConnection.token).post('/Groups', { schemas: [GROUP], displayName: 'Demoted', members: [{ value: ids.adminA }] }).expect(201);
      expect((await membershipOf(ids.orgA, ids.adminA)).role_id).toBe(ids.adminRoleA);
    });
  });

  it("finding 4: a mapping the owner saved does not raise the connection's own administrator", async () => {
    // Her own role as the connection's default, so that a mapping that does not apply leaves her as she was.
    const { token, connection } = await connectionOf(ids.mallory, { defaultRoleId: ids.writerRoleA });
    await (await admin(ids.adminA)).put(`/scim/connections/${connection.id}/group-mappings`, { mappings: [{ group: 'IT Admins', roleId: ids.adminRoleA }] }).expect(200);
    await scim(token).post('/Groups', { schemas: [GROUP], displayName: 'IT Admins', members: [{ value: ids.mallory }] }).expect(201);
    expect(await membershipOf(ids.orgA, ids.mallory)).toEqual({ role_id: ids.writerRoleA, suspended_at: null });
  });

  it('finding 5: only the connection that deprovisioned a person lifts the suspension', async () => {
    const h = mallory;
    const x = scim((await connectionOf(ids.mallory)).token);
    await h.patch(`/Users/${ids.leaver}`, replace('active', 'False')).expect(200);
    const lifted = await x.patch(`/Users/${ids.leaver}`, replace('active', 'True'));
    expect(lifted.status).toBe(403);
    expect((await membershipOf(ids.orgA, ids.leaver)).suspended_at).not.toBeNull();
    expect((await request(t.http).post('/api/v1/auth/login').send({ email: who.leaver, password: PASSWORD })).status).toBe(401);
    await h.patch(`/Users/${ids.leaver}`, replace('active', 'True')).expect(200);
    expect((await membershipOf(ids.orgA, ids.leaver)).suspended_at).toBeNull();
  });

  it("finding 6: an administrator restricted to one site after making the connection no longer reaches all-sites members through it", async () => {
    const { token } = await connectionOf(ids.mallory);
    await ownerQuery(`UPDATE organization_memberships SET site_restricted = true WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.mallory]);
    await ownerQuery(`INSERT INTO organization_membership_sites (org_id, user_id, site_id) VALUES ($1, $2, $3)`, [ids.orgA, ids.mallory, ids.siteA1]);
    try {
      expect((await scim(token).patch(`/Users/${ids.viewer}`, replace('active', 'False'))).status).toBe(403);
      expect((await membershipOf(ids.orgA, ids.viewer)).suspended_at).toBeNull();
    } finally {
      await ownerQuery(`DELETE FROM organization_membership_sites WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.mallory]);
      await ownerQuery(`UPDATE organization_memberships SET site_restricted = false WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.mallory]);
    }
  });

  it("creates no one once the connection's administrator can no longer grant its default role: restricted to a site, or the role grew", async () => {
    const { token } = await connectionOf(ids.mallory, { defaultRoleId: ids.joinerRoleA });
    const joiner = (name: string) => {
      const email = `${name}-${uniq()}@${domain}`;
      return { schemas: [USER], userName: email, emails: [{ value: email, type: 'work', primary: true }], active: true };
    };
    expect((await scim(token).post('/Users', joiner('allowed'))).status).toBe(201);
    const changes: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
      [
        'restricted to one site',
        () => ownerQuery(`UPDATE organization_memberships SET site_restricted = true WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.mallory]),
        () => ownerQuery(`UPDATE organization_memberships SET site_restricted = false WHERE org_id = $1 AND user_id = $2`, [ids.orgA, ids.mallory]),
      ],
      [
        'the default role gained a permission she lacks',
        () => ownerQuery(`UPDATE roles SET permissions = permissions || '{devices:execute}' WHERE id = $1`, [ids.joinerRoleA]),
        () => ownerQuery(`UPDATE roles SET permissions = '{organizations:read}' WHERE id = $1`, [ids.joinerRoleA]),
      ],
    ];
    for (const [what, take, give] of changes) {
      await take();
      try {
        const body = joiner('refused');
        const res = await scim(token).post('/Users', body);
        expect({ what, status: res.status, schemas: res.body.schemas }).toEqual({ what, status: 403, schemas: [ERROR] });
        expect(await ownerQuery(`SELECT 1 FROM users WHERE email_lower = lower($1)`, [body.emails[0].value])).toEqual([]);
      } finally {
        await give();
      }
    }
    expect((await scim(token).post('/Users', joiner('allowed-again'))).status).toBe(201);
  });

  it("finding 7: renaming to another tenant's address answers exactly as renaming to a free one", async () => {
    const probe = async (email: string) => {
      const res = await mallory.patch(`/Users/${ids.otherTech}`, replace('emails[type eq "work"].value', email));
      return { status: res.status, body: res.body };
    };
    const taken = await probe(who.elsewhere);
    const free = await probe(`nobody-${uniq()}@${otherDomain}`);
    expect(taken.status).toBe(403);
    expect(taken).toEqual(free);
    // The connection's own userName is unique among the connection's people only: no other tenant shows through it.
    const userName = await mallory.patch(`/Users/${ids.leaver}`, replace('userName', who.elsewhere));
    expect(userName.status).toBe(200);
  });
});
