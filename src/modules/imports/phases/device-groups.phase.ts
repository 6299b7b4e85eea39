import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { stableJson } from '../../../common/json.util';
import { DeviceFilter, filterCustomFields, mapFilterCustomFields } from '../../policies/dynamic-groups/device-filter.util';
import type { ImportPlan } from '../document/import-plan';
import { ImportLinkRepository, LinkWrite } from '../import-link.repository';
import { CustomFieldService } from '../../content/custom-fields/custom-field.service';
import { DeviceGroupService } from '../../tenancy/device-groups/device-group.service';
import { SiteService } from '../../tenancy/sites/site.service';
import { ImportPhase, importableCustomers, PhaseContext } from './phase.types';
import { loadSites } from './site-lookup';

/**
 * Source device groups become dynamic device groups; their filters name custom fields by key,
 * stored as definition ids. Membership follows from the filter (database triggers), so role
 * policies bound to these groups reach the right devices.
 */
@Injectable()
export class DeviceGroupsPhase implements ImportPhase {
  readonly name = 'deviceGroups' as const;

  constructor(
    private readonly links: ImportLinkRepository,
    private readonly sites: SiteService,
    private readonly fields: CustomFieldService,
    private readonly groups: DeviceGroupService,
  ) {}

  async run(plan: ImportPlan, ctx: PhaseContext): Promise<void> {
    const customers = importableCustomers(plan, ctx, (c) => c.groups.map((g) => ({ ref: g.ref, kind: 'device_group' as const, externalId: g.item.externalId })));
    const orgIds = customers.map((c) => c.orgId);
    const sites = await loadSites(this.sites, this.links, ctx, orgIds);
    const defs = await this.fields.definitionsOf(ctx.partnerId, orgIds);
    const groups = await this.groups.groupsOf(orgIds);
    const links = new Map((await this.links.links(ctx.partnerId, ctx.source, 'device_group')).map((l) => [`${l.namespace}|${l.external_id}`, l.local_id]));
    const newLinks: LinkWrite[] = [];

    for (const { customer, orgId } of customers) {
      const keys = new Map<string, string>();
      for (const d of defs) if (d.partner_id || d.org_id === orgId) keys.set(d.key, d.id);
      for (const { ref, item: src } of customer.groups) {
        const item = { kind: 'device_group' as const, ref, externalId: src.externalId, name: src.name };
        const missing = filterCustomFields(src.filter).filter((k) => !keys.has(k));
        if (missing.length) {
          ctx.out.add('unresolved', { ...item, reason: `the filter names custom fields that were not imported: ${missing.join(', ')}` });
          continue;
        }
        const siteId = src.locationExternalId ? (sites.byLocation(orgId, src.locationExternalId) ?? null) : null;
        if (src.locationExternalId && !siteId) {
          ctx.out.add('unresolved', { ...item, reason: 'its location was not imported' });
          continue;
        }
        const filter = mapFilterCustomFields(src.filter as DeviceFilter, (k) => keys.get(k) as string);
        const orgGroups = groups.filter((g) => g.org_id === orgId);
        const current = orgGroups.find((g) => g.id === links.get(`${orgId}|${src.externalId}`)) ?? orgGroups.find((g) => g.name === src.name);
        if (current && current.kind !== 'dynamic') {
          ctx.out.add('unresolved', { ...item, reason: 'a static device group of the organization has this name' });
          continue;
        }
        if (current && orgGroups.some((g) => g.id !== current.id && g.name === src.name)) {
          ctx.out.add('unresolved', { ...item, reason: 'another device group of the organization has this name' });
          continue;
        }
        const id = current?.id ?? randomUUID();
        newLinks.push({ kind: 'device_group', namespace: orgId, externalId: src.externalId, orgId, localId: id });
        if (!current) {
          await this.groups.insertDynamic(id, orgId, { siteId, name: src.name, filter });
          groups.push({ id, org_id: orgId, site_id: siteId, name: src.name, kind: 'dynamic', filter });
          ctx.out.add('created', item);
          continue;
        }
        const fields = [...(current.name !== src.name ? ['name'] : []), ...(current.site_id !== siteId ? ['locationExternalId'] : []), ...(stableJson(current.filter) !== stableJson(filter) ? ['filter'] : [])];
        if (fields.length) {
          await this.groups.updateDynamic(id, { siteId, name: src.name, filter });
          Object.assign(current, { name: src.name, site_id: siteId, filter });
          ctx.out.add('updated', { ...item, fields });
        } else ctx.out.add('unchanged', item);
      }
    }
    await this.links.saveLinks(ctx.partnerId, ctx.source, newLinks);
  }
}
