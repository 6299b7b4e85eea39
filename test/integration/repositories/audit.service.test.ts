import { randomUUID } from 'node:crypto';
import { AuditQueryService } from '../../../src/modules/audit/audit-query.service';
import { AuditService } from '../../../src/modules/audit/audit.service';
import { callerOf, orgPrincipal, partnerPrincipal, startMedium, type Medium } from '../../support/medium/medium-harness';
import { seedTenants, type TenantRows } from '../../support/medium/tenant-rows';

/** The audit trail: rows appended in the caller's transaction with who, from where and why; the filtered, paged read. */
describe('AuditService and AuditQueryService', () => {
  let m: Medium;
  let t: TenantRows;
  let audit: AuditService;
  let query: AuditQueryService;

  const asAdminA = () => orgPrincipal(t.orgA, { userId: t.adminA });
  const stored = async (action: string) => (await m.owner.query(`SELECT * FROM audit_logs WHERE action = $1 ORDER BY created_at, id`, [action])).rows;

  beforeAll(async () => {
    m = await startMedium([AuditService, AuditQueryService]);
    audit = m.get(AuditService);
    query = m.get(AuditQueryService);
    t = await seedTenants(m.owner);
  });
  afterAll(() => m.close());

  describe('record', () => {
    it('names the signed-in user, the request id and the client address', async () => {
      const action = `medium.${t.label}.user`;
      await m.asCaller(callerOf({ orgIds: [t.orgA], userId: t.adminA }), () =>
        audit.record({ action, orgId: t.orgA, resourceType: 'device', resourceId: t.deviceA1, details: { hostname: 'WS' } }), { id: 'req-user', ip: '192.0.2.7' });
      expect(await stored(action)).toEqual([
        expect.objectContaining({ org_id: t.orgA, partner_id: null, actor_type: 'user', actor_id: t.adminA, actor_user_id: t.adminA, resource_id: t.deviceA1, details: { hostname: 'WS' }, ip: '192.0.2.7', request_id: 'req-user' }),
      ]);
    });

    it('names an API key as the actor and its creator as the person behind it', async () => {
      const action = `medium.${t.label}.key`;
      const keyId = randomUUID();
      await m.asCaller(callerOf({ orgIds: [t.orgA], kind: 'api_key', apiKeyId: keyId, userId: t.adminA }), () => audit.record({ action, orgId: t.orgA }));
      expect(await stored(action)).toEqual([expect.objectContaining({ actor_type: 'api_key', actor_id: keyId, actor_user_id: t.adminA })]);
    });

    it('records background work as the system, and a partner-owned action without an organization', async () => {
      const action = `medium.${t.label}.system`;
      await m.as(partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech }), () => audit.record({ action, partnerId: t.partnerP, actor: { type: 'system', id: null } }));
      expect(await stored(action)).toEqual([expect.objectContaining({ org_id: null, partner_id: t.partnerP, actor_type: 'system', actor_id: null, actor_user_id: null, request_id: null })]);
    });

    it('stamps each row with the moment it was written, so rows of one transaction keep their order', async () => {
      const first = `medium.${t.label}.first`;
      const second = `medium.${t.label}.second`;
      await m.as(asAdminA(), async () => {
        await audit.record({ action: first, orgId: t.orgA });
        await audit.record({ action: second, orgId: t.orgA });
      });
      // Compared in the database, at its microsecond precision (a Date keeps milliseconds).
      const rows = (
        await m.owner.query(
          `SELECT action, created_at > lag(created_at) OVER (ORDER BY created_at) AS later FROM audit_logs WHERE action IN ($1, $2) ORDER BY created_at`,
          [first, second],
        )
      ).rows;
      // Strictly later: with the transaction's start as the stamp, both rows had one created_at and no order.
      expect(rows).toEqual([
        { action: first, later: null },
        { action: second, later: true },
      ]);
    });

    it('keeps no audit row of an action whose transaction rolled back', async () => {
      const action = `medium.${t.label}.rolled-back`;
      await m.tryAs(asAdminA(), () => audit.record({ action, orgId: t.orgA, actor: { type: 'user', id: t.adminA } }));
      expect(await stored(action)).toEqual([]);
    });

    it('refuses a row about another tenant', async () => {
      const action = `medium.${t.label}.planted`;
      await expect(m.as(asAdminA(), () => audit.record({ action, orgId: t.orgB, actor: { type: 'user', id: t.adminA } }))).rejects.toThrow(/row-level security/);
      await expect(m.as(asAdminA(), () => audit.record({ action, partnerId: t.partnerQ, actor: { type: 'user', id: t.adminA } }))).rejects.toThrow(/row-level security/);
      expect(await stored(action)).toEqual([]);
    });
  });

  describe('list', () => {
    const prefix = () => `medium.${t.label}.list`;
    beforeAll(async () => {
      // Five rows of organization A a second apart (oldest first), one of organization B, one partner-owned row.
      for (let i = 0; i < 5; i++) {
        await m.owner.query(
          `INSERT INTO audit_logs (org_id, actor_type, actor_id, action, resource_type, resource_id, created_at)
           VALUES ($1, $2, $3, $4, 'device', $5, now() - make_interval(secs => $6))`,
          [t.orgA, i % 2 ? 'agent' : 'user', i % 2 ? t.agentA1.id : t.adminA, `${prefix()}.${i % 2 ? 'ingest' : 'change'}`, `r${i}`, 100 - i],
        );
      }
      await m.owner.query(`INSERT INTO audit_logs (org_id, actor_type, action) VALUES ($1, 'user', $2)`, [t.orgB, `${prefix()}.change`]);
      await m.owner.query(`INSERT INTO audit_logs (partner_id, actor_type, actor_user_id, action) VALUES ($1, 'user', $2, $3)`, [t.partnerP, t.tech, `${prefix()}.partner`]);
    });

    it('lists the tenant’s rows newest first, filtered by an action prefix, with the exact total and pages', async () => {
      const page1 = await m.as(asAdminA(), () => query.list({ action: `${prefix()}.*`, page: 1, limit: 3 }));
      expect(page1.auditLogs.map((l) => l.resourceId)).toEqual(['r4', 'r3', 'r2']);
      expect(page1.pagination).toEqual({ page: 1, limit: 3, total: 5 });
      const page2 = await m.as(asAdminA(), () => query.list({ action: `${prefix()}.*`, page: 2, limit: 3 }));
      expect(page2.auditLogs.map((l) => l.resourceId)).toEqual(['r1', 'r0']);
    });

    it('filters by exact action, actor type, actor, resource and time range', async () => {
      const ids = async (q: Parameters<AuditQueryService['list']>[0]) => (await m.as(asAdminA(), () => query.list({ action: `${prefix()}.*`, ...q }))).auditLogs.map((l) => l.resourceId);
      expect(await ids({ action: `${prefix()}.ingest` })).toEqual(['r3', 'r1']);
      expect(await ids({ actorType: 'user' })).toEqual(['r4', 'r2', 'r0']);
      expect(await ids({ actorId: t.agentA1.id })).toEqual(['r3', 'r1']);
      expect(await ids({ resourceType: 'device', resourceId: 'r2' })).toEqual(['r2']);
      const at = Object.fromEntries(
        (await m.owner.query(`SELECT resource_id, created_at FROM audit_logs WHERE org_id = $1 AND action LIKE $2`, [t.orgA, `${prefix()}.%`])).rows.map((r) => [r.resource_id, (r.created_at as Date).toISOString()]),
      );
      // Stored times have microseconds; a JavaScript date stops at the millisecond, so the range ends one later.
      expect(await ids({ from: at.r2, to: new Date(Date.parse(at.r3) + 1).toISOString() })).toEqual(['r3', 'r2']);
    });

    it('treats LIKE wildcards in an action prefix as plain characters', async () => {
      const listed = await m.as(asAdminA(), () => query.list({ action: `medium.${t.label}.li_t.*` }));
      expect(listed.pagination.total).toBe(0);
    });

    it('shows neither another organization’s rows nor a partner’s to an organization member; the partner-wide technician sees the partner’s', async () => {
      const asA = await m.as(asAdminA(), () => query.list({ action: `${prefix()}.*`, limit: 100 }));
      expect(asA.auditLogs.every((l) => l.orgId === t.orgA)).toBe(true);
      const asB = await m.as(orgPrincipal(t.orgB, { userId: t.adminB }), () => query.list({ action: `${prefix()}.*` }));
      expect(asB.auditLogs.map((l) => l.orgId)).toEqual([t.orgB]);
      const asTech = await m.as(partnerPrincipal(t.partnerP, [t.orgA, t.orgA2], { userId: t.tech }), () => query.list({ action: `${prefix()}.*`, limit: 100 }));
      expect(asTech.pagination.total).toBe(6);
      expect(asTech.auditLogs.map((l) => l.action)).toContain(`${prefix()}.partner`);
      expect(asTech.auditLogs.map((l) => l.orgId)).not.toContain(t.orgB);
    });
  });
});
