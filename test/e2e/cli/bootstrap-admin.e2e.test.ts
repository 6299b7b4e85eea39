import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { bootstrapAdmin, BootstrapError } from '../../../src/cli/bootstrap-admin';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { PartnerRepository } from '../../../src/modules/tenancy/partners/partner.repository';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';

/**
 * Issue 15 item 3: the first partner and administrator of a production database, created by the
 * bootstrap command (its function, on the run's database) and then used as the person would: the
 * set-password link, sign-in, the session's reach.
 */
describe('bootstrapping the first partner administrator', () => {
  let t: TestApp;
  const run = randomBytes(4).toString('hex');
  const partner = `Bootstrap MSP ${run}`;
  const email = `first-admin-${run}@bootstrap.example`;
  const password = 'a long first password';

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_URL: 'https://rmm.bootstrap.example' });
  });
  afterAll(() => t.close());

  it('creates the partner, an all-permission partner role and the administrator, and a one-time link stored only as its hash', async () => {
    const r = await bootstrapAdmin(t.app, { partner, email, name: 'First Admin' });
    expect(r.link).toBe(`https://rmm.bootstrap.example/reset-password#token=${r.token}`);
    expect(r.expiresAt.getTime() - Date.now()).toBeGreaterThan(71 * 3600_000);

    const [user] = await ownerQuery<{ name: string; password_hash: string | null; status: string }>(`SELECT name, password_hash, status FROM users WHERE id = $1`, [r.userId]);
    expect(user).toEqual({ name: 'First Admin', password_hash: null, status: 'active' });
    const [membership] = await ownerQuery(
      `SELECT pm.org_access, pm.site_restricted, r.name, r.scope, r.permissions FROM partner_memberships pm JOIN roles r ON r.id = pm.role_id
        WHERE pm.partner_id = $1 AND pm.user_id = $2`,
      [r.partnerId, r.userId],
    );
    expect(membership).toEqual({ org_access: 'all', site_restricted: false, name: 'Administrator', scope: 'partner', permissions: ['*'] });
    const tokens = await ownerQuery<{ token_hash: string }>(`SELECT token_hash FROM password_reset_tokens WHERE user_id = $1 AND used_at IS NULL`, [r.userId]);
    expect(tokens).toEqual([{ token_hash: tokenHash(r.token) }]);
    const audit = await ownerQuery<{ action: string; actor_type: string }>(
      `SELECT action, actor_type FROM audit_logs WHERE partner_id = $1 ORDER BY action`,
      [r.partnerId],
    );
    expect(audit).toEqual([{ action: 'partner.create', actor_type: 'system' }, { action: 'user.create', actor_type: 'system' }]);

    // The person follows the link, signs in, and holds the partner-wide administrator's session.
    await request(t.http).post('/api/v1/auth/login').send({ email, password }).expect(401);
    await request(t.http).post('/api/v1/auth/reset-password').send({ token: r.token, password }).expect(200);
    const login = await request(t.http).post('/api/v1/auth/login').send({ email, password }).expect(200);
    const me = await request(t.http).get('/api/v1/auth/me').set('Authorization', `Bearer ${login.body.accessToken}`).expect(200);
    expect(me.body.session).toMatchObject({ scope: 'partner', partnerId: r.partnerId, mfa: false, permissions: ['*'] });
    // The link was single-use.
    await request(t.http).post('/api/v1/auth/reset-password').send({ token: r.token, password: 'another long password' }).expect(400);
  });

  it('refuses to run twice for the same email, whatever the partner, and creates nothing', async () => {
    const other = `Second MSP ${run}`;
    await expect(bootstrapAdmin(t.app, { partner: other, email: email.toUpperCase() })).rejects.toThrow(new BootstrapError(`An account for ${email.toUpperCase()} already exists: nothing was created (--new-link re-issues the link of an administrator who has no password yet)`));
    expect(await ownerQuery(`SELECT 1 FROM partners WHERE name = $1`, [other])).toEqual([]);
  });

  it('refuses a partner name already taken (ignoring case) and leaves the new email unused', async () => {
    const newcomer = `newcomer-${run}@bootstrap.example`;
    await expect(bootstrapAdmin(t.app, { partner: partner.toLowerCase(), email: newcomer })).rejects.toThrow(/already exists: nothing was created/);
    expect(await ownerQuery(`SELECT 1 FROM users WHERE email = $1`, [newcomer])).toEqual([]);
    expect(await ownerQuery(`SELECT 1 FROM partners WHERE lower(name) = lower($1)`, [partner])).toHaveLength(1);
  });

  it('creates exactly one administrator when two runs race for the same email', async () => {
    const racer = `racer-${run}@bootstrap.example`;
    const outcomes = await Promise.allSettled([
      bootstrapAdmin(t.app, { partner: `Race A ${run}`, email: racer }),
      bootstrapAdmin(t.app, { partner: `Race B ${run}`, email: racer }),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(BootstrapError);
    expect(await ownerQuery(`SELECT 1 FROM users WHERE lower(email) = $1`, [racer])).toHaveLength(1);
    expect(await ownerQuery(`SELECT name FROM partners WHERE name IN ($1, $2)`, [`Race A ${run}`, `Race B ${run}`])).toHaveLength(1);
  });

  it('re-issues the link while the administrator has no password, and the older link stops working', async () => {
    const late = `late-${run}@bootstrap.example`;
    const latePartner = `Late MSP ${run}`;
    const first = await bootstrapAdmin(t.app, { partner: latePartner, email: late, linkHours: 1 });
    const second = await bootstrapAdmin(t.app, { partner: latePartner, email: late, newLink: true });
    expect(second.userId).toBe(first.userId);
    expect(second.token).not.toBe(first.token);
    await request(t.http).post('/api/v1/auth/reset-password').send({ token: first.token, password }).expect(400);
    await request(t.http).post('/api/v1/auth/reset-password').send({ token: second.token, password }).expect(200);
    await expect(bootstrapAdmin(t.app, { partner: latePartner, email: late, newLink: true })).rejects.toThrow(/already chosen a password/);
  });

  it('re-issues no link for someone who is not that partner\'s bootstrap administrator', async () => {
    await expect(bootstrapAdmin(t.app, { partner: `Nobody ${run}`, email: `nobody-${run}@bootstrap.example`, newLink: true })).rejects.toThrow(/is not the administrator/);
    await expect(bootstrapAdmin(t.app, { partner: `Race A ${run}`, email, newLink: true })).rejects.toThrow(/is not the administrator/);
  });

  it('checks its arguments at the edges before touching the database', async () => {
    const ok = { partner: `Edge ${run}`, email: `edge-${run}@bootstrap.example` };
    for (const linkHours of [0, 169, 1.5, Number.NaN]) {
      await expect(bootstrapAdmin(t.app, { ...ok, linkHours })).rejects.toThrow(/--link-hours must be a whole number of hours from 1 to 168/);
    }
    await expect(bootstrapAdmin(t.app, { ...ok, email: 'not-an-email' })).rejects.toThrow(/--email/);
    await expect(bootstrapAdmin(t.app, { ...ok, partner: '   ' })).rejects.toThrow(/--partner/);
    await expect(bootstrapAdmin(t.app, { ...ok, partner: 'x'.repeat(256) })).rejects.toThrow(/--partner/);
    expect(await ownerQuery(`SELECT 1 FROM users WHERE email = $1`, [ok.email])).toEqual([]);
    const edge = await bootstrapAdmin(t.app, { ...ok, partner: 'p'.repeat(255 - run.length) + run, linkHours: 168 });
    expect(edge.expiresAt.getTime() - Date.now()).toBeGreaterThan(167 * 3600_000);
  });

  it("writes the partner through the caller's transaction: active by default in system context, refused by row-level security in a partner's", async () => {
    const tx = t.app.get(TenantTransactionService);
    const repo = t.app.get(PartnerRepository);
    const created = await tx.withSystemContext('the test creates a partner as the bootstrap command does', () => repo.insert(`Entity MSP ${run}`));
    expect(await ownerQuery(`SELECT name, status FROM partners WHERE id = $1`, [created])).toEqual([{ name: `Entity MSP ${run}`, status: 'active' }]);
    const asPartner = { scope: 'partner' as const, orgIds: [], partnerIds: [created], userId: null, partnerWide: true };
    await expect(tx.run(asPartner, () => repo.insert(`Planted MSP ${run}`))).rejects.toThrow(/row-level security/);
    expect(await ownerQuery(`SELECT 1 FROM partners WHERE name = $1`, [`Planted MSP ${run}`])).toEqual([]);
  });
});
