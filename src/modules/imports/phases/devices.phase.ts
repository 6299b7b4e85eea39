import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { ImportPlan } from '../document/import-plan';
import { ImportLinkRepository, LinkWrite } from '../import-link.repository';
import type { DeviceRecord } from '../../tenancy/devices/device-batch.repository';
import { DeviceService } from '../../tenancy/devices/device.service';
import { SiteService } from '../../tenancy/sites/site.service';
import { changedFields, ImportPhase, importableCustomers, PhaseContext } from './phase.types';
import { loadSites } from './site-lookup';

/**
 * Source devices become devices of their customer's organization, in their location's site
 * (or "Main"). A device is found by its link from an earlier import, else by a hostname that
 * exactly one unlinked device of the organization has; several such devices make the row
 * unresolved rather than a guess.
 */
@Injectable()
export class DevicesPhase implements ImportPhase {
  readonly name = 'devices' as const;

  constructor(
    private readonly links: ImportLinkRepository,
    private readonly sites: SiteService,
    private readonly devices: DeviceService,
  ) {}

  async run(plan: ImportPlan, ctx: PhaseContext): Promise<void> {
    const customers = importableCustomers(plan, ctx, (c) => c.devices.map((d) => ({ ref: d.ref, kind: 'device' as const, externalId: d.item.externalId })));
    const orgIds = customers.map((c) => c.orgId);
    const sites = await loadSites(this.sites, this.links, ctx, orgIds);
    const existing = await this.devices.ofOrgs(orgIds);
    const byId = new Map(existing.map((d) => [d.id, d]));
    const linkRows = await this.links.links(ctx.partnerId, ctx.source, 'device');
    const links = new Map(linkRows.map((l) => [`${l.namespace}|${l.external_id}`, l.local_id]));
    const linked = new Set(linkRows.map((l) => l.local_id));
    const byHost = new Map<string, DeviceRecord[]>();
    for (const d of existing) {
      if (linked.has(d.id)) continue;
      const k = `${d.org_id}|${d.hostname.toLowerCase()}`;
      byHost.set(k, [...(byHost.get(k) ?? []), d]);
    }

    const inserts: DeviceRecord[] = [];
    const updates: DeviceRecord[] = [];
    const newLinks: LinkWrite[] = [];
    for (const { customer, orgId } of customers) {
      for (const { ref, item: src } of customer.devices) {
        const item = { kind: 'device' as const, ref, externalId: src.externalId, name: src.hostname };
        const siteId = src.locationExternalId ? sites.byLocation(orgId, src.locationExternalId) : sites.main(orgId);
        if (!siteId) {
          ctx.out.add('unresolved', { ...item, reason: 'its location was not imported' });
          continue;
        }
        let current = byId.get(links.get(`${orgId}|${src.externalId}`) ?? '');
        let reason: string | undefined;
        if (!current) {
          const candidates = byHost.get(`${orgId}|${src.hostname.toLowerCase()}`) ?? [];
          if (candidates.length > 1) {
            ctx.out.add('unresolved', { ...item, reason: `${candidates.length} existing devices of the organization have this hostname` });
            continue;
          }
          current = candidates[0];
          if (current) {
            reason = 'matched an existing device by hostname';
            byHost.delete(`${orgId}|${src.hostname.toLowerCase()}`);
            newLinks.push({ kind: 'device', namespace: orgId, externalId: src.externalId, orgId, localId: current.id });
          }
        }
        if (!current) {
          const id = randomUUID();
          inserts.push({ id, org_id: orgId, site_id: siteId, hostname: src.hostname, os_type: src.osType ?? null, status: src.status ?? 'active' });
          newLinks.push({ kind: 'device', namespace: orgId, externalId: src.externalId, orgId, localId: id });
          ctx.out.add('created', item);
          continue;
        }
        const desired: DeviceRecord = {
          ...current,
          site_id: siteId,
          hostname: src.hostname,
          os_type: src.osType === undefined ? current.os_type : src.osType,
          status: src.status ?? current.status,
        };
        const fields = changedFields(
          { hostname: current.hostname, osType: current.os_type, locationExternalId: current.site_id, status: current.status },
          { hostname: desired.hostname, osType: desired.os_type, locationExternalId: desired.site_id, status: desired.status },
          ['hostname', 'osType', 'locationExternalId', 'status'],
        );
        if (fields.length) {
          updates.push(desired);
          ctx.out.add('updated', { ...item, fields, reason });
        } else ctx.out.add('unchanged', { ...item, reason });
      }
    }
    await this.devices.upsertMany(inserts, updates);
    await this.links.saveLinks(ctx.partnerId, ctx.source, newLinks);
  }
}
