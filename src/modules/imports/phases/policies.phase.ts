import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { ImportPlan, Planned } from '../document/import-plan';
import type { SourceAssignment, SourcePolicy } from '../document/interchange.types';
import { ImportLinkRepository, LinkWrite } from '../import-link.repository';
import type { AssignmentRecord, PolicyRecord } from '../../policies/policy-batch.repository';
import { PolicyService } from '../../policies/policy.service';
import { SiteService } from '../../tenancy/sites/site.service';
import type { ReportItem } from '../import-report';
import { mergeLater } from './merge.util';
import { changedFields, ImportPhase, PhaseContext } from './phase.types';
import { loadSites, SiteLookup } from './site-lookup';

const LEVEL = { account: 'partner', customer: 'organization', location: 'site', deviceGroup: 'device_group', device: 'device' } as const;

interface Target {
  level: (typeof LEVEL)[keyof typeof LEVEL];
  id: string;
  orgId: string | null;
}

interface Wanted {
  ref: string;
  target: Target;
  priority: number;
}

/**
 * Configuration and patch policies (spec 2.10.6): account policies become partner policies,
 * customer and location policies organization policies (no nested inheritance is kept). A
 * location's policy is also assigned to that location's site, so it keeps applying where it
 * did. Assignments from the document are added or re-prioritised; others are left alone.
 */
@Injectable()
export class PoliciesPhase implements ImportPhase {
  readonly name = 'policies' as const;

  constructor(
    private readonly links: ImportLinkRepository,
    private readonly sites: SiteService,
    private readonly policies: PolicyService,
  ) {}

  async run(plan: ImportPlan, ctx: PhaseContext): Promise<void> {
    const orgIds = plan.customers.map((c) => ctx.orgs.get(c.ref)).filter((x): x is string => !!x);
    const existing = await this.policies.ofOwners(ctx.partnerId, orgIds);
    const byId = new Map(existing.map((p) => [p.id, p]));
    const links = new Map((await this.links.links(ctx.partnerId, ctx.source, 'policy')).map((l) => [`${l.namespace ?? ''}|${l.external_id}`, l.local_id]));
    const sites = await loadSites(this.sites, this.links, ctx, orgIds);
    const groupLinks = new Map((await this.links.links(ctx.partnerId, ctx.source, 'device_group')).map((l) => [`${l.namespace}|${l.external_id}`, l.local_id]));
    const deviceLinks = new Map((await this.links.links(ctx.partnerId, ctx.source, 'device')).map((l) => [`${l.namespace}|${l.external_id}`, l.local_id]));
    const customerOrg = new Map(plan.customers.filter((c) => 'externalId' in c.target).map((c) => [(c.target as { externalId: string }).externalId, ctx.orgs.get(c.ref) ?? null]));
    const newLinks: LinkWrite[] = [];
    const policyTargets: { policyId: string; policyName: string; wanted: Wanted[] }[] = [];

    const resolve = (a: SourceAssignment, ownerOrg: string | null): Target | string => {
      if (a.target === 'account') return { level: 'partner', id: ctx.partnerId, orgId: null };
      const orgId = ownerOrg ?? customerOrg.get(a.customerExternalId as string) ?? null;
      if (!orgId) return 'the customer was not imported';
      if (a.target === 'customer') return { level: 'organization', id: orgId, orgId };
      const ext = a.externalId as string;
      const id = a.target === 'location' ? siteOf(sites, orgId, ext) : (a.target === 'deviceGroup' ? groupLinks : deviceLinks).get(`${orgId}|${ext}`);
      return id ? { level: LEVEL[a.target], id, orgId } : `the ${a.target} ${ext} was not imported`;
    };

    const apply = async (rows: Planned<SourcePolicy>[], overridden: string[], orgId: string | null) => {
      const winner = rows[rows.length - 1];
      const p = winner.item;
      const item: ReportItem = { kind: 'policy', ref: winner.ref, externalId: p.externalId, name: p.name, ...(overridden.length ? { mergedFrom: overridden } : {}) };
      const mine = (x: PolicyRecord) => x.type === p.type && (orgId ? x.org_id === orgId : x.partner_id === ctx.partnerId);
      const linked = rows.map((r) => byId.get(links.get(`${orgId ?? ''}|${r.item.externalId}`) ?? '')).find((x) => x && mine(x));
      const current = linked ?? existing.find((x) => mine(x) && x.name.toLowerCase() === p.name.toLowerCase());
      const desired: PolicyRecord = {
        id: current?.id ?? randomUUID(),
        partner_id: orgId ? null : ctx.partnerId,
        org_id: orgId,
        type: p.type,
        name: p.name,
        description: p.description ?? null,
        enabled: p.enabled ?? true,
        features: p.features,
      };
      if (current && existing.some((x) => x.id !== current.id && mine(x) && x.name.toLowerCase() === p.name.toLowerCase())) {
        return ctx.out.add('unresolved', { ...item, reason: `another ${p.type} policy of the owner has this name` });
      }
      if (!current) {
        await this.policies.save(desired, true);
        existing.push(desired);
        ctx.out.add('created', item);
      } else {
        const fields = changedFields({ ...current }, { ...desired }, ['name', 'description', 'enabled', 'features']);
        if (fields.length) {
          await this.policies.save(desired, false);
          Object.assign(current, desired);
          ctx.out.add('updated', { ...item, fields });
        } else ctx.out.add('unchanged', item);
      }
      const wanted = new Map<string, Wanted>();
      for (const r of rows) {
        newLinks.push({ kind: 'policy', namespace: orgId, externalId: r.item.externalId, orgId, localId: desired.id });
        const sources: [string, SourceAssignment][] = (r.item.assignments ?? []).map((a, i) => [`${r.ref}.assignments[${i}]`, a]);
        if (r.locationExternalId) sources.push([`${r.ref} (its location)`, { target: 'location', externalId: r.locationExternalId }]);
        for (const [ref, a] of sources) {
          const target = resolve(a, orgId);
          if (typeof target === 'string') {
            ctx.out.add('unresolved', { kind: 'policy_assignment', ref, name: p.name, reason: target });
            continue;
          }
          wanted.set(`${target.level}|${target.id}`, { ref, target, priority: a.priority ?? 100 });
        }
      }
      policyTargets.push({ policyId: desired.id, policyName: p.name, wanted: [...wanted.values()] });
    };

    for (const p of plan.account.policies) await apply([p], [], null);
    for (const c of plan.customers) {
      const orgId = ctx.orgs.get(c.ref);
      if (!orgId) {
        for (const p of c.policies) ctx.out.add('unresolved', { kind: 'policy', ref: p.ref, externalId: p.item.externalId, name: p.item.name, reason: 'the customer was not imported' });
        continue;
      }
      const merged = mergeLater(c.policies, (p) => `${p.type}|${p.name.toLowerCase()}`, ['description', 'enabled', 'features'], 'policy', ctx.out.conflicts);
      for (const m of merged) await apply(m.rows, m.overridden, orgId);
    }

    const current = await this.policies.assignmentsOf(policyTargets.map((p) => p.policyId));
    const inserts: AssignmentRecord[] = [];
    const priorities: { id: string; priority: number }[] = [];
    for (const { policyId, policyName, wanted } of policyTargets) {
      for (const w of wanted) {
        const item: ReportItem = { kind: 'policy_assignment', ref: w.ref, name: policyName };
        const found = current.find((a) => a.policy_id === policyId && a.target_level === w.target.level && a.target_id === w.target.id);
        if (!found) {
          inserts.push({
            partner_id: ctx.partnerId,
            org_id: w.target.orgId,
            policy_id: policyId,
            target_level: w.target.level,
            site_id: w.target.level === 'site' ? w.target.id : null,
            device_group_id: w.target.level === 'device_group' ? w.target.id : null,
            device_id: w.target.level === 'device' ? w.target.id : null,
            priority: w.priority,
          });
          ctx.out.add('created', item);
        } else if (found.priority !== w.priority) {
          priorities.push({ id: found.id, priority: w.priority });
          ctx.out.add('updated', { ...item, fields: ['priority'] });
        } else ctx.out.add('unchanged', item);
      }
    }
    await this.policies.upsertAssignments(inserts, priorities);
    await this.links.saveLinks(ctx.partnerId, ctx.source, newLinks);
  }
}

function siteOf(sites: SiteLookup, orgId: string, ext: string): string | undefined {
  return sites.byLocation(orgId, ext);
}
