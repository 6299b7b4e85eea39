import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../infra/config/app-config';
import { DbService } from '../infra/database/db.service';
import { TenantTransactionService } from '../infra/database/tenant-transaction.service';
import { SecretBoxService, tokenHash } from '../infra/crypto/secret-box.service';
import { PasswordService } from '../infra/crypto/password.service';
import { totpContext } from '../modules/auth/own-account.util';
import { canonicalJson } from '../modules/pam/flows/canonical-json.util';
import { validateRuleShape } from '../modules/pam/rules/engine/rule-shape.util';
import { newRuleWrite } from '../modules/pam/rules/rule-write.util';
import { Fixture, FixtureIds } from './fixture.types';

type FixtureRequest = NonNullable<Fixture['elevationRequests']>[number];

export class FixtureError extends Error {}

/**
 * Loads a fixture idempotently: rows are matched by id, else by their natural key (partner
 * name, organization name within its partner, site or group name within its organization,
 * device agent id or hostname, role name within its owner, user email, signer group or rule name
 * within its organization), and only differences are written, so loading the same file twice
 * changes nothing. Elevation requests are history: inserted once by id, never rewritten.
 */
@Injectable()
export class SeedService {
  constructor(
    private readonly db: DbService,
    private readonly tx: TenantTransactionService,
    private readonly box: SecretBoxService,
    private readonly passwords: PasswordService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  load(f: Fixture): Promise<FixtureIds> {
    return this.tx.withSystemContext('fixtures create tenants that do not exist yet', () => this.loadAll(f));
  }

  /**
   * The fixture's credentials this database holds, one line each, reading only: its users, matched by
   * email as load matches them, and its enrolled agents, matched by agent id or by the hash of the
   * fixture's token (an agent renamed or moved still answers to the published token).
   */
  heldCredentials(f: Fixture): Promise<string[]> {
    const emails = (f.users ?? []).map((u) => u.email.toLowerCase());
    const agents = (f.devices ?? []).filter((d) => d.agentId && d.agentToken);
    return this.tx.withSystemContext('a fixture is looked for across every tenant', async () => {
      const users = await this.db.rows<{ email: string }>(`SELECT email FROM users WHERE lower(email) = ANY($1::text[]) ORDER BY lower(email)`, [emails]);
      const enrolled = await this.db.rows<{ id: string; hostname: string }>(
        `SELECT a.id, d.hostname FROM agents a JOIN devices d ON d.id = a.device_id
          WHERE a.id = ANY($1::uuid[]) OR a.token_hash = ANY($2::text[]) ORDER BY d.hostname, a.id`,
        [agents.map((d) => d.agentId), agents.map((d) => tokenHash(d.agentToken!))],
      );
      return [...users.map((u) => `user ${u.email}`), ...enrolled.map((a) => `agent ${a.id} (device ${a.hostname})`)];
    });
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
    await this.loadPam(f, ids, ref);
    return ids;
  }

  /** Signer groups and rules (bumping each touched organization's rules version), then request history. */
  private async loadPam(f: Fixture, ids: FixtureIds, ref: (k: string | undefined, kind: string) => string): Promise<void> {
    const touched = new Set<string>();
    for (const g of f.signerGroups ?? []) {
      const orgId = ref(g.organization, 'organization');
      const signers = [...new Map(g.signers.map((x) => x.trim()).filter(Boolean).map((x) => [x.toLowerCase(), x])).values()];
      const r = await this.upsertTracked('pam_signer_groups', g.id, { org_id: orgId, name: g.name }, { org_id: orgId, name: g.name, description: g.description ?? null, signers });
      ids[g.key] = r.id;
      if (r.changed) touched.add(orgId);
    }
    for (const rule of f.pamRules ?? []) {
      const orgId = ref(rule.organization, 'organization');
      const { key: _key, id, organization: _organization, site, matchSignerGroup, ...fields } = rule;
      const w = newRuleWrite({ ...fields, siteId: site ? ref(site, 'site') : null, matchSignerGroupId: matchSignerGroup ? ref(matchSignerGroup, 'signer group') : null });
      const shape = validateRuleShape(w);
      if (!shape.ok) throw new FixtureError(`PAM rule "${rule.name}": ${shape.message}`);
      const r = await this.upsertTracked('pam_rules', id, { org_id: orgId, name: w.name }, {
        org_id: orgId, site_id: w.siteId, name: w.name, verdict: w.verdict, priority: w.priority, enabled: w.enabled,
        match_signer: w.matchSigner, match_signer_group_id: w.matchSignerGroupId, match_hash: w.matchHash, match_path_glob: w.matchPathGlob,
        match_parent_image: w.matchParentImage, match_command_line: w.matchCommandLine, match_user: w.matchUser, match_ad_group: w.matchAdGroup,
        match_tool_name: w.matchToolName, match_risk_tier: w.matchRiskTier, match_negate: w.matchNegate, time_window: w.timeWindow,
        approval_duration_minutes: w.approvalDurationMinutes,
      });
      ids[rule.key] = r.id;
      if (r.changed) touched.add(orgId);
    }
    for (const orgId of touched) {
      await this.db.exec(
        `INSERT INTO pam_rules_versions (org_id, version) VALUES ($1, 1) ON CONFLICT (org_id) DO UPDATE SET version = pam_rules_versions.version + 1`,
        [orgId],
      );
    }
    if (!f.elevationRequests?.length) return;
    const { now } = (await this.db.one<{ now: Date }>(`SELECT now() AS now`))!;
    for (const e of f.elevationRequests) {
      ids[e.key] = await this.loadRequest(e, now, ids, ref);
    }
  }

  /**
   * One request as the lifecycle would have left it: the row, its transition log and, for an
   * actuated one, the completed command. Matched by id only; an existing request is left alone.
   */
  private async loadRequest(e: FixtureRequest, now: Date, ids: FixtureIds, ref: (k: string | undefined, kind: string) => string): Promise<string> {
    if (!e.id) throw new FixtureError(`Elevation request "${e.key}" needs an id`);
    if (!/^[0-9a-fA-F]{64}$/.test(e.hash)) throw new FixtureError(`Elevation request "${e.key}": hash must be 64 hexadecimal characters`);
    if (!(e.requestedHoursAgo >= 0)) throw new FixtureError(`Elevation request "${e.key}": requestedHoursAgo must be a number of hours, 0 or more`);
    if (await this.db.one(`SELECT 1 FROM elevation_requests WHERE id = $1`, [e.id])) return e.id;
    const device = await this.db.one<{ org_id: string; site_id: string }>(`SELECT org_id, site_id FROM devices WHERE id = $1`, [ref(e.device, 'device')]);
    const rule = e.rule
      ? await this.db.one<{ id: string; name: string; approval_duration_minutes: number | null }>(`SELECT id, name, approval_duration_minutes FROM pam_rules WHERE id = $1`, [ref(e.rule, 'PAM rule')])
      : null;
    const decider = e.decidedBy ? await this.db.one<{ id: string; name: string }>(`SELECT id, name FROM users WHERE id = $1`, [ref(e.decidedBy, 'user')]) : null;
    const human = ['approved', 'revoked', 'actuating'].includes(e.status) || (e.status === 'denied' && !rule);
    if (human && !decider) throw new FixtureError(`Elevation request "${e.key}" (${e.status}) needs decidedBy, the technician who decided it`);
    if (e.status === 'auto_approved' && !rule) throw new FixtureError(`Elevation request "${e.key}" (auto_approved) needs the rule that approved it`);

    const minutes = (m: number) => m * 60_000;
    const requestedAt = new Date(now.getTime() - e.requestedHoursAgo * 3_600_000);
    const decidedAt = human ? new Date(requestedAt.getTime() + minutes(e.decidedAfterMinutes ?? 4)) : ['auto_approved', 'denied'].includes(e.status) ? requestedAt : null;
    const granted = ['approved', 'auto_approved', 'revoked', 'actuating'].includes(e.status);
    const duration = granted ? (e.durationMinutes ?? rule?.approval_duration_minutes ?? 60) : null;
    const expiresAt = granted && decidedAt ? new Date(decidedAt.getTime() + minutes(duration!)) : null;
    const revokedAt = e.status === 'revoked' ? new Date(decidedAt!.getTime() + minutes(Math.min(10, duration! / 2))) : null;
    const actuatedAt = e.status === 'actuating' ? new Date(decidedAt!.getTime() + minutes(1)) : null;
    const exe = e.path.split(/[\\/]/).pop();
    await this.db.exec(
      `INSERT INTO elevation_requests (id, org_id, site_id, device_id, flow_type, status, subject_username, target_executable_path,
         target_executable_hash, target_executable_signer, parent_image, command_line, reason, requested_at, decided_at, expires_at,
         duration_minutes, decision_source, pam_rule_id, pam_rule_name, approved_by, approved_by_name, denied_by, denied_by_name,
         revoked_by, revoked_by_name, revoked_at, decision_reason, revoke_reason, actuated_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'uac_intercept', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
         $24, $25, $26, $27, $28, $29, $13, coalesce($26::timestamptz, $14::timestamptz, $13::timestamptz))`,
      [
        e.id, device!.org_id, device!.site_id, ids[e.device], e.status, e.subjectUsername, e.path, e.hash.toLowerCase(), e.signer ?? null,
        e.parentImage ?? null, e.commandLine ?? null, `Elevation prompt for ${exe} observed by the agent`, requestedAt, decidedAt, expiresAt,
        duration, human ? 'human' : rule && decidedAt ? 'pam_rule' : null, rule?.id ?? null, rule?.name ?? null,
        granted && human ? decider!.id : null, granted && human ? decider!.name : null,
        e.status === 'denied' && human ? decider!.id : null, e.status === 'denied' && human ? decider!.name : null,
        revokedAt ? decider!.id : null, revokedAt ? decider!.name : null, revokedAt,
        human ? (e.reason ?? null) : null, revokedAt ? (e.revokeReason ?? 'Work finished') : null, actuatedAt,
      ],
    );

    type Event = { type: string; from: string | null; to: string; at: Date; actor: 'user' | 'system' | 'agent'; actorId: string | null; details?: object };
    const agent = await this.db.one<{ id: string }>(`SELECT id FROM agents WHERE device_id = $1 ORDER BY created_at LIMIT 1`, [ids[e.device]]);
    const firstStatus = human || e.status === 'expired' || e.status === 'pending' ? 'pending' : e.status;
    const events: Event[] = [{ type: 'created', from: null, to: firstStatus, at: requestedAt, actor: 'agent', actorId: agent?.id ?? null, details: rule ? { ruleId: rule.id, ruleName: rule.name } : {} }];
    if (human) events.push({ type: e.status === 'denied' ? 'denied' : 'approved', from: 'pending', to: e.status === 'denied' ? 'denied' : 'approved', at: decidedAt!, actor: 'user', actorId: decider!.id, details: e.reason ? { reason: e.reason } : {} });
    if (e.status === 'expired') events.push({ type: 'expired', from: 'pending', to: 'expired', at: new Date(requestedAt.getTime() + minutes(this.config.pamPendingTtlMinutes)), actor: 'system', actorId: null });
    if (revokedAt) events.push({ type: 'revoked', from: 'approved', to: 'revoked', at: revokedAt, actor: 'user', actorId: decider!.id, details: { reason: e.revokeReason ?? 'Work finished' } });
    if (actuatedAt) {
      const command = await this.db.one<{ id: string }>(
        `INSERT INTO device_commands (org_id, device_id, type, payload, status, elevation_request_id, created_at, delivered_at, completed_at)
         VALUES ($1, $2, 'actuate_elevation', $3, 'completed', $4, $5::timestamptz, $5::timestamptz + interval '2 seconds', $5::timestamptz + interval '5 seconds') RETURNING id`,
        [device!.org_id, ids[e.device], { elevationRequestId: e.id, timeoutMs: 8000 }, e.id, actuatedAt],
      );
      events.push({ type: 'actuation_claimed', from: 'approved', to: 'actuating', at: actuatedAt, actor: 'user', actorId: decider!.id, details: { commandId: command!.id } });
      events.push({ type: 'actuation_completed', from: 'actuating', to: 'actuating', at: new Date(actuatedAt.getTime() + 5_000), actor: 'agent', actorId: agent?.id ?? null, details: { commandId: command!.id } });
    }
    for (const ev of events) {
      await this.db.exec(
        `INSERT INTO pam_elevation_events (org_id, elevation_request_id, type, from_status, to_status, actor_type, actor_id, details, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [device!.org_id, e.id, ev.type, ev.from, ev.to, ev.actor, ev.actorId, ev.details ?? {}, ev.at],
      );
    }
    return e.id;
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

  private async upsert(table: string, id: string | undefined, natural: Record<string, unknown>, values: Record<string, unknown>): Promise<string> {
    return (await this.upsertTracked(table, id, natural, values)).id;
  }

  /** Finds the row by id or natural key; inserts it, or updates only the columns that differ (`changed` says whether it wrote). */
  private async upsertTracked(table: string, id: string | undefined, natural: Record<string, unknown>, values: Record<string, unknown>): Promise<{ id: string; changed: boolean }> {
    const keyCols = id ? { id } : natural;
    const where = Object.keys(keyCols).map((c, i) => (c === 'email' || (['roles', 'pam_signer_groups'].includes(table) && c === 'name') ? `lower(${c}) = lower($${i + 1})` : `${c} = $${i + 1}`));
    const found = await this.db.one<Record<string, unknown>>(`SELECT * FROM ${table} WHERE ${where.join(' AND ')}`, Object.values(keyCols));
    if (!found) {
      const cols = Object.keys(values).concat(id ? ['id'] : []);
      const vals = Object.values(values).concat(id ? [id] : []);
      const row = await this.db.one<{ id: string }>(
        `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`,
        vals,
      );
      return { id: row!.id, changed: true };
    }
    // Key order is not kept by jsonb, so values compare in canonical form.
    const changed = Object.entries(values).filter(([c, v]) => canonicalJson(found[c] ?? null) !== canonicalJson(v ?? null));
    if (changed.length) {
      await this.db.exec(
        `UPDATE ${table} SET ${changed.map(([c], i) => `${c} = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1`,
        [found.id, ...changed.map(([, v]) => v)],
      );
    }
    return { id: found.id as string, changed: changed.length > 0 };
  }
}
