import { randomBytes } from 'node:crypto';
import { tokenHash } from '../../../src/infra/crypto/secret-box.service';
import { PrincipalRepository } from '../../../src/modules/auth/principal.repository';
import { ScimConnectionLookupRepository } from '../../../src/modules/scim/scim-connection-lookup.repository';
import { orgPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/**
 * Principal resolution: what the auth guard reads on every request, before any tenant is known,
 * so in system context statement by statement (TenantTransactionService.withSystemLookup).
 */
describe('PrincipalRepository', () => {
  let m: Medium;
  let t: TenantRows;
  let repo: PrincipalRepository;
  const lookup = <T>(fn: (r: PrincipalRepository) => Promise<T>) => m.systemLookup(() => fn(repo));

  const session = async (userId: string, over: { scope?: string; orgId?: string | null; partnerId?: string | null; expiresIn?: string; revoked?: boolean } = {}) =>
    (
      await m.owner.query<{ id: string }>(
        `INSERT INTO sessions (user_id, scope, org_id, partner_id, mfa, auth_method, expires_at, revoked_at)
         VALUES ($1, $2, $3, $4, true, 'password', now() + $5::interval, CASE WHEN $6 THEN now() END) RETURNING id`,
        [userId, over.scope ?? 'organization', over.orgId === undefined ? t.orgA : over.orgId, over.partnerId ?? null, over.expiresIn ?? '1 hour', over.revoked ?? false],
      )
    ).rows[0].id;
  /** Runs fn with a row changed by the owner, and changes it back. */
  const withChange = async <T>(change: string, undo: string, params: unknown[], fn: () => Promise<T>): Promise<T> => {
    await m.owner.query(change, params);
    try {
      return await fn();
    } finally {
      await m.owner.query(undo, params);
    }
  };

  beforeAll(async () => {
    m = await startMedium([PrincipalRepository, ScimConnectionLookupRepository]);
    repo = m.get(PrincipalRepository);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('sessions', () => {
    it('finds a live session with its user’s status, and neither a revoked nor an expired one', async () => {
      const live = await session(t.adminA);
      expect(await lookup((r) => r.activeSession(live))).toEqual({ id: live, user_id: t.adminA, scope: 'organization', org_id: t.orgA, partner_id: null, mfa: true, user_status: 'active' });
      expect(await lookup(async (r) => r.activeSession(await session(t.adminA, { revoked: true })))).toBeNull();
      expect(await lookup(async (r) => r.activeSession(await session(t.adminA, { expiresIn: '-1 second' })))).toBeNull();
    });

    it('finds no session of another tenant under a tenant’s scope', async () => {
      const theirs = await session(t.adminB, { orgId: t.orgB });
      expect(await m.as(orgPrincipal(t.orgA), () => repo.activeSession(theirs))).toBeNull();
    });
  });

  describe('grants', () => {
    it('grants an organization member their role’s permissions in that organization, with their sites when restricted', async () => {
      expect(await lookup((r) => r.organizationGrant(t.adminA, t.orgA))).toEqual({ permissions: ['*'], org_ids: [t.orgA], partner_id: t.partnerP, site_ids: null });
      expect(await lookup((r) => r.organizationGrant(t.siteUserA1, t.orgA))).toMatchObject({ org_ids: [t.orgA], site_ids: [t.siteA1] });
      expect(await lookup((r) => r.organizationGrant(t.readerA, t.orgA))).toMatchObject({ permissions: ['devices:read', 'audit:read'] });
    });

    it('grants nothing in an organization of another tenant, nor through a suspended membership, organization or partner', async () => {
      expect(await lookup((r) => r.organizationGrant(t.adminA, t.orgB))).toBeNull();
      const suspended = (sql: string, undo: string, params: unknown[]) => withChange(sql, undo, params, () => lookup((r) => r.organizationGrant(t.adminA, t.orgA)));
      expect(await suspended(`UPDATE organization_memberships SET suspended_at = now() WHERE user_id = $1`, `UPDATE organization_memberships SET suspended_at = NULL WHERE user_id = $1`, [t.adminA])).toBeNull();
      expect(await suspended(`UPDATE organizations SET status = 'suspended' WHERE id = $1`, `UPDATE organizations SET status = 'active' WHERE id = $1`, [t.orgA])).toBeNull();
      expect(await suspended(`UPDATE partners SET status = 'suspended' WHERE id = $1`, `UPDATE partners SET status = 'active' WHERE id = $1`, [t.partnerP])).toBeNull();
    });

    it('grants a technician with all-organization access every active organization of the partner, partner-wide', async () => {
      const grant = await lookup((r) => r.partnerGrant(t.tech, t.partnerP));
      expect(grant).toMatchObject({ permissions: ['*'], partner_id: t.partnerP, partner_wide: true, site_ids: null });
      expect([...grant!.org_ids].sort()).toEqual([t.orgA, t.orgA2].sort());
      const withoutSuspended = await withChange(`UPDATE organizations SET status = 'suspended' WHERE id = $1`, `UPDATE organizations SET status = 'active' WHERE id = $1`, [t.orgA2], () =>
        lookup((r) => r.partnerGrant(t.tech, t.partnerP)),
      );
      expect(withoutSuspended!.org_ids).toEqual([t.orgA]);
    });

    it('grants a technician with selected organizations only those, and sites when restricted', async () => {
      await m.owner.query(`UPDATE partner_memberships SET org_access = 'selected', site_restricted = true WHERE user_id = $1`, [t.tech]);
      await m.owner.query(`INSERT INTO partner_membership_orgs (partner_id, user_id, org_id) VALUES ($1, $2, $3)`, [t.partnerP, t.tech, t.orgA2]);
      await m.owner.query(`INSERT INTO partner_membership_sites (partner_id, user_id, org_id, site_id) VALUES ($1, $2, $3, $4)`, [t.partnerP, t.tech, t.orgA2, t.siteX1]);
      try {
        expect(await lookup((r) => r.partnerGrant(t.tech, t.partnerP))).toMatchObject({ org_ids: [t.orgA2], site_ids: [t.siteX1], partner_wide: false });
      } finally {
        await m.owner.query(`DELETE FROM partner_membership_sites WHERE user_id = $1`, [t.tech]);
        await m.owner.query(`DELETE FROM partner_membership_orgs WHERE user_id = $1`, [t.tech]);
        await m.owner.query(`UPDATE partner_memberships SET org_access = 'all', site_restricted = false WHERE user_id = $1`, [t.tech]);
      }
    });

    it('grants no partner membership in another partner', async () => {
      expect(await lookup((r) => r.partnerGrant(t.tech, t.partnerQ))).toBeNull();
    });
  });

  describe('credentials', () => {
    it('resolves an API key with the state of its creator and marks it used; a revoked or expired key resolves to nothing', async () => {
      const key = async (name: string, state: { revoked?: boolean; expiresIn?: string } = {}) =>
        (
          await m.owner.query<{ id: string }>(
            `INSERT INTO api_keys (org_id, name, key_prefix, key_hash, permissions, created_by, revoked_at, expires_at)
             VALUES ($1, $2, 'rmm_', $3, '{devices:read}', $4, CASE WHEN $5 THEN now() END, now() + $6::interval) RETURNING id`,
            [t.orgA, name, tokenHash(name), t.adminA, state.revoked ?? false, state.expiresIn ?? null],
          )
        ).rows[0].id;
      const tag = randomBytes(4).toString('hex');
      const live = await key(`live-${tag}`);
      await key(`revoked-${tag}`, { revoked: true });
      await key(`expired-${tag}`, { expiresIn: '-1 second' });
      expect(await lookup((r) => r.apiKey(tokenHash(`live-${tag}`)))).toEqual({
        id: live,
        org_id: t.orgA,
        partner_id: null,
        permissions: ['devices:read'],
        mfa_satisfied: false,
        created_by: t.adminA,
        creator_status: 'active',
        creator_mfa_enrolled: false,
      });
      expect((await m.owner.query(`SELECT last_used_at FROM api_keys WHERE id = $1`, [live])).rows[0].last_used_at).toBeInstanceOf(Date);
      expect(await lookup((r) => r.apiKey(tokenHash(`revoked-${tag}`)))).toBeNull();
      expect(await lookup((r) => r.apiKey(tokenHash(`expired-${tag}`)))).toBeNull();
    });

    it('resolves a SCIM connection with its acting administrator, and not once revoked', async () => {
      const token = `scim-${randomBytes(6).toString('hex')}`;
      const { rows } = await m.owner.query(
        `INSERT INTO scim_connections (org_id, name, token_prefix, token_hash, acting_user_id) VALUES ($1, 'IdP', 'scim_', $2, $3) RETURNING id`,
        [t.orgA, tokenHash(token), t.adminA],
      );
      // The lookup is the scim module's (it owns scim_connections); principal resolution calls it through a port.
      expect(await m.system(() => m.get(ScimConnectionLookupRepository).byTokenHash(tokenHash(token)))).toEqual({ id: rows[0].id, org_id: t.orgA, partner_id: null, acting_user_id: t.adminA, acting_user_status: 'active' });
      await m.owner.query(`UPDATE scim_connections SET revoked_at = now() WHERE id = $1`, [rows[0].id]);
      expect(await m.system(() => m.get(ScimConnectionLookupRepository).byTokenHash(tokenHash(token)))).toBeNull();
    });

    it('resolves an agent token to its device, site, organization and partner while both are active and the agent is not revoked', async () => {
      const hash = tokenHash(t.agentA1.token);
      expect(await lookup((r) => r.agent(hash))).toEqual({ agent_id: t.agentA1.id, device_id: t.deviceA1, org_id: t.orgA, partner_id: t.partnerP, site_id: t.siteA1, device_status: 'active' });
      expect(
        await withChange(`UPDATE organizations SET status = 'suspended' WHERE id = $1`, `UPDATE organizations SET status = 'active' WHERE id = $1`, [t.orgA], () => lookup((r) => r.agent(hash))),
      ).toBeNull();
      expect(await withChange(`UPDATE agents SET revoked_at = now() WHERE id = $1`, `UPDATE agents SET revoked_at = NULL WHERE id = $1`, [t.agentA1.id], () => lookup((r) => r.agent(hash)))).toBeNull();
      expect(await lookup((r) => r.orgPartner(t.orgB))).toBe(t.partnerQ);
    });

    it('resolves many agent tokens in one statement, each row naming its token, and leaves out a revoked agent and an unknown token', async () => {
      const [a1, b1] = [tokenHash(t.agentA1.token), tokenHash(t.agentB1.token)];
      const unknown = tokenHash('no-such-agent-token');
      const rows = await lookup((r) => r.agents([a1, b1, unknown]));
      expect(rows.map((r) => [r.token_hash, r.agent_id, r.device_id]).sort()).toEqual([[a1, t.agentA1.id, t.deviceA1], [b1, t.agentB1.id, t.deviceB1]].sort());
      const afterRevocation = await withChange(`UPDATE agents SET revoked_at = now() WHERE id = $1`, `UPDATE agents SET revoked_at = NULL WHERE id = $1`, [t.agentA1.id], () => lookup((r) => r.agents([a1, b1])));
      expect(afterRevocation.map((r) => r.agent_id)).toEqual([t.agentB1.id]);
      // Only in system context: under a tenant's scope no agent of another tenant is found.
      expect((await m.as(orgPrincipal(t.orgA), () => repo.agents([a1, b1]))).map((r) => r.agent_id)).not.toContain(t.agentB1.id);
    });

    it('resolves no credential of another tenant under a tenant’s scope', async () => {
      expect(await m.as(orgPrincipal(t.orgA), () => repo.agent(tokenHash(t.agentB1.token)))).toBeNull();
      expect(await m.as(orgPrincipal(t.orgA), () => repo.orgPartner(t.orgB))).toBeNull();
    });
  });
});
