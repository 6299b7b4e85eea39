import { Injectable } from '@nestjs/common';
import { Db } from '../db.service';
import { TenantTransaction } from '../tenant-transaction.service';
import { SecretBox, tokenHash } from '../../crypto/secret-box.service';
import { PasswordService } from '../../../modules/auth/password.service';
import { totpContext } from '../../../modules/auth/auth.service';
import { Fixture, FixtureIds } from './fixture.types';

export class FixtureError extends Error {}

/**
 * Loads a fixture idempotently: rows are matched by id, else by their natural key (partner
 * name, organization name within its partner, site or group name within its organization,
 * device agent id or hostname, role name within its owner, user email), and only differences
 * are written, so loading the same file twice changes nothing.
 */
@Injectable()
export class SeedService {
  constructor(
    private readonly db: Db,
    private readonly tx: TenantTransaction,
    private readonly box: SecretBox,
    private readonly passwords: PasswordService,
  ) {}

  load(f: Fixture): Promise<FixtureIds> {
    return this.tx.withSystemContext('fixtures create tenants that do not exist yet', () => this.loadAll(f));
  }

  private async loadAll(f: Fixture): Promise<FixtureIds> {
    const ids: FixtureIds = {};
    const ref = (key: string | undefined, kind: string): string => {
      if (!key) throw new FixtureError(`Missing ${kind} reference`);
      const id = ids[key];
      if (!id) throw new FixtureError(`Unknown ${kind} key "${key}"`);
      return id;
    };
    for (const p of f.partners ?? []) {
      ids[p.key] = await this.upsert('partners', p.id, { name: p.name }, { name: p.name, status: p.status ?? 'active' });
    }
    for (const o of f.organizations ?? []) {
      const partnerId = ref(o.partner, 'partner');
      ids[o.key] = await this.upsert('organizations', o.id, { partner_id: partnerId, name: o.name }, { partner_id: partnerId, name: o.name, status: o.status ?? 'active' });
    }
    for (const s of f.sites ?? []) {
      const orgId = ref(s.organization, 'organization');
      ids[s.key] = await this.upsert('sites', s.id, { org_id: orgId, name: s.name }, { org_id: orgId, name: s.name, timezone: s.timezone ?? 'UTC' });
    }
    for (const g of f.deviceGroups ?? []) {
      const orgId = ref(g.organization, 'organization');
      ids[g.key] = await this.upsert('device_groups', g.id, { org_id: orgId, name: g.name }, { org_id: orgId, name: g.name, site_id: g.site ? ref(g.site, 'site') : null });
    }
    for (const d of f.devices ?? []) {
      const orgId = ref(d.organization, 'organization');
      let id = d.id;
      if (!id && d.agentId) id = (await this.db.one<{ device_id: string }>(`SELECT device_id FROM agents WHERE id = $1`, [d.agentId]))?.device_id;
      ids[d.key] = await this.upsert('devices', id, { org_id: orgId, hostname: d.hostname }, { org_id: orgId, site_id: ref(d.site, 'site'), hostname: d.hostname, status: d.status ?? 'active' });
      if (d.agentId && d.agentToken) {
        await this.db.exec(
          `INSERT INTO agents (id, org_id, device_id, token_hash) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO UPDATE SET token_hash = EXCLUDED.token_hash WHERE agents.token_hash IS DISTINCT FROM EXCLUDED.token_hash`,
          [d.agentId, orgId, ids[d.key], tokenHash(d.agentToken)],
        );
      }
      for (const g of d.groups ?? []) {
        await this.db.exec(`INSERT INTO device_group_members (org_id, group_id, device_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [orgId, ref(g, 'device group'), ids[d.key]]);
      }
    }
    for (const r of f.roles ?? []) {
      const owner = r.scope === 'organization' ? { org_id: ref(r.organization, 'organization') } : { partner_id: ref(r.partner, 'partner') };
      ids[r.key] = await this.upsert('roles', r.id, { ...owner, name: r.name }, { ...owner, scope: r.scope, name: r.name, permissions: [...r.permissions].sort() });
    }
    for (const u of f.users ?? []) {
      ids[u.key] = await this.loadUser(u, ref);
    }
    return ids;
  }

  private async loadUser(u: NonNullable<Fixture['users']>[number], ref: (k: string | undefined, kind: string) => string): Promise<string> {
    const existing = await this.db.one<{ id: string; password_hash: string | null; totp_secret: string | null }>(
      `SELECT id, password_hash, totp_secret FROM users WHERE ${u.id ? 'id = $1' : 'lower(email) = lower($1)'}`,
      [u.id ?? u.email],
    );
    const id = await this.upsert('users', existing?.id ?? u.id, { email: u.email }, { email: u.email, name: u.name ?? u.email.split('@')[0], status: u.status ?? 'active' });
    if (u.password && !(existing?.password_hash && (await this.passwords.verify(existing.password_hash, u.password)))) {
      await this.db.exec(`UPDATE users SET password_hash = $2 WHERE id = $1`, [id, await this.passwords.hash(u.password)]);
    }
    const currentTotp = existing?.totp_secret ? this.box.decrypt(existing.totp_secret, totpContext(id)) : null;
    if ((u.totpSecret ?? null) !== currentTotp) {
      await this.db.exec(`UPDATE users SET totp_secret = $2 WHERE id = $1`, [id, u.totpSecret ? this.box.encrypt(u.totpSecret, totpContext(id)) : null]);
    }
    for (const m of u.memberships ?? []) {
      const orgId = ref(m.organization, 'organization');
      const restricted = m.sites !== undefined;
      await this.db.exec(
        `INSERT INTO organization_memberships (org_id, user_id, role_id, site_restricted) VALUES ($1, $2, $3, $4)
         ON CONFLICT (org_id, user_id) DO UPDATE SET role_id = EXCLUDED.role_id, site_restricted = EXCLUDED.site_restricted
         WHERE (organization_memberships.role_id, organization_memberships.site_restricted) IS DISTINCT FROM (EXCLUDED.role_id, EXCLUDED.site_restricted)`,
        [orgId, id, ref(m.role, 'role'), restricted],
      );
      const siteIds = (m.sites ?? []).map((s) => ref(s, 'site'));
      await this.db.exec(`DELETE FROM organization_membership_sites WHERE org_id = $1 AND user_id = $2 AND NOT (site_id = ANY($3::uuid[]))`, [orgId, id, siteIds]);
      for (const siteId of siteIds) {
        await this.db.exec(`INSERT INTO organization_membership_sites (org_id, user_id, site_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [orgId, id, siteId]);
      }
    }
    const pm = u.partnerMembership;
    if (pm) {
      const partnerId = ref(pm.partner, 'partner');
      await this.db.exec(
        `INSERT INTO partner_memberships (partner_id, user_id, role_id, org_access, site_restricted) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (partner_id, user_id) DO UPDATE SET role_id = EXCLUDED.role_id, org_access = EXCLUDED.org_access, site_restricted = EXCLUDED.site_restricted
         WHERE (partner_memberships.role_id, partner_memberships.org_access, partner_memberships.site_restricted)
               IS DISTINCT FROM (EXCLUDED.role_id, EXCLUDED.org_access, EXCLUDED.site_restricted)`,
        [partnerId, id, ref(pm.role, 'role'), pm.orgAccess ?? 'all', pm.sites !== undefined],
      );
      const orgIds = (pm.organizations ?? []).map((o) => ref(o, 'organization'));
      await this.db.exec(`DELETE FROM partner_membership_orgs WHERE partner_id = $1 AND user_id = $2 AND NOT (org_id = ANY($3::uuid[]))`, [partnerId, id, orgIds]);
      for (const orgId of orgIds) {
        await this.db.exec(`INSERT INTO partner_membership_orgs (partner_id, user_id, org_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [partnerId, id, orgId]);
      }
      const sites = await this.db.rows<{ id: string; org_id: string }>(`SELECT id, org_id FROM sites WHERE id = ANY($1::uuid[])`, [(pm.sites ?? []).map((s) => ref(s, 'site'))]);
      await this.db.exec(`DELETE FROM partner_membership_sites WHERE partner_id = $1 AND user_id = $2 AND NOT (site_id = ANY($3::uuid[]))`, [partnerId, id, sites.map((s) => s.id)]);
      for (const s of sites) {
        await this.db.exec(`INSERT INTO partner_membership_sites (partner_id, user_id, org_id, site_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [partnerId, id, s.org_id, s.id]);
      }
    }
    return id;
  }

  /** Finds the row by id or natural key; inserts it, or updates only the columns that differ. */
  private async upsert(table: string, id: string | undefined, natural: Record<string, unknown>, values: Record<string, unknown>): Promise<string> {
    const keyCols = id ? { id } : natural;
    const where = Object.keys(keyCols).map((c, i) => (c === 'email' || (table === 'roles' && c === 'name') ? `lower(${c}) = lower($${i + 1})` : `${c} = $${i + 1}`));
    const found = await this.db.one<Record<string, unknown>>(`SELECT * FROM ${table} WHERE ${where.join(' AND ')}`, Object.values(keyCols));
    if (!found) {
      const cols = Object.keys(values).concat(id ? ['id'] : []);
      const vals = Object.values(values).concat(id ? [id] : []);
      const row = await this.db.one<{ id: string }>(
        `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`,
        vals,
      );
      return row!.id;
    }
    const changed = Object.entries(values).filter(([c, v]) => JSON.stringify(found[c]) !== JSON.stringify(v));
    if (changed.length) {
      await this.db.exec(
        `UPDATE ${table} SET ${changed.map(([c], i) => `${c} = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1`,
        [found.id, ...changed.map(([, v]) => v)],
      );
    }
    return found.id as string;
  }
}
