import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { ImportPlan } from '../document/import-plan';
import { ImportLinkRepository, LinkWrite } from '../import-link.repository';
import { OrganizationService } from '../../tenancy/organizations/organization.service';
import { SiteService } from '../../tenancy/sites/site.service';
import type { ImportPhase, PhaseContext } from './phase.types';

export const DEFAULT_SITE = 'Main';

/**
 * Customers become organizations of the importing partner and locations become their sites
 * (spec 2.10.1). A customer is found by its link from an earlier import, else by a unique
 * organization name; a customer without locations, or with devices outside every location,
 * gets the default site "Main".
 */
@Injectable()
export class OrganizationsPhase implements ImportPhase {
  readonly name = 'organizations' as const;

  constructor(
    private readonly links: ImportLinkRepository,
    private readonly organizations: OrganizationService,
    private readonly sites: SiteService,
  ) {}

  async run(plan: ImportPlan, ctx: PhaseContext): Promise<void> {
    const links: LinkWrite[] = [];
    const customerLinks = new Map((await this.links.links(ctx.partnerId, ctx.source, 'customer')).map((l) => [l.external_id, l.local_id]));
    const linkedOrgs = new Set(customerLinks.values());
    const orgs = await this.organizations.ofPartner(ctx.partnerId);
    const byId = new Map(orgs.map((o) => [o.id, o]));
    const byName = new Map<string, { id: string; name: string }[]>();
    for (const o of orgs) byName.set(o.name.toLowerCase(), [...(byName.get(o.name.toLowerCase()) ?? []), o]);

    for (const c of plan.customers) {
      if ('orgId' in c.target) {
        ctx.orgs.set(c.ref, c.target.orgId);
        continue;
      }
      const { externalId, name } = c.target;
      const item = { kind: 'organization' as const, ref: c.ref, externalId, name };
      const linked = byId.get(customerLinks.get(externalId) ?? '');
      if (linked) {
        if (linked.name !== name) {
          await this.organizations.rename(linked.id, name);
          ctx.out.add('updated', { ...item, fields: ['name'] });
        } else ctx.out.add('unchanged', item);
        ctx.orgs.set(c.ref, linked.id);
        continue;
      }
      const sameName = (byName.get(name.toLowerCase()) ?? []).filter((o) => !linkedOrgs.has(o.id));
      if (sameName.length > 1) {
        ctx.out.add('unresolved', { ...item, reason: `${sameName.length} organizations of the partner are named "${name}"` });
        ctx.orgs.set(c.ref, null);
        continue;
      }
      let orgId: string;
      if (sameName.length === 1) {
        orgId = sameName[0].id;
        ctx.out.add('unchanged', { ...item, reason: 'matched an existing organization by name' });
      } else {
        orgId = randomUUID();
        await ctx.addOrgsToScope([orgId]);
        await this.organizations.insertWithId(orgId, ctx.partnerId, name);
        ctx.out.add('created', item);
      }
      linkedOrgs.add(orgId);
      links.push({ kind: 'customer', namespace: null, externalId, orgId, localId: orgId });
      ctx.orgs.set(c.ref, orgId);
    }

    const orgIds = plan.customers.map((c) => ctx.orgs.get(c.ref)).filter((x): x is string => !!x);
    const sites = await this.sites.ofOrgs(orgIds);
    const siteLinks = new Map((await this.links.links(ctx.partnerId, ctx.source, 'location')).map((l) => [`${l.namespace}|${l.external_id}`, l.local_id]));
    for (const c of plan.customers) {
      const orgId = ctx.orgs.get(c.ref);
      if (!orgId || 'orgId' in c.target) {
        for (const l of c.locations) ctx.out.add('unresolved', { kind: 'site', ref: l.ref, externalId: l.item.externalId, name: l.item.name, reason: 'the customer was not imported' });
        continue;
      }
      const orgSites = sites.filter((s) => s.org_id === orgId);
      for (const { ref, item: loc } of c.locations) {
        const item = { kind: 'site' as const, ref, externalId: loc.externalId, name: loc.name };
        const linked = orgSites.find((s) => s.id === siteLinks.get(`${orgId}|${loc.externalId}`));
        const site = linked ?? orgSites.find((s) => s.name.toLowerCase() === loc.name.toLowerCase());
        if (!site) {
          const id = randomUUID();
          const timezone = loc.timezone ?? 'UTC';
          await this.sites.insertWithId({ id, orgId, name: loc.name, timezone });
          orgSites.push({ id, org_id: orgId, name: loc.name, timezone });
          ctx.out.add('created', item);
          links.push({ kind: 'location', namespace: orgId, externalId: loc.externalId, orgId, localId: id });
          continue;
        }
        links.push({ kind: 'location', namespace: orgId, externalId: loc.externalId, orgId, localId: site.id });
        const timezone = loc.timezone ?? site.timezone;
        const fields = [...(site.name !== loc.name ? ['name'] : []), ...(site.timezone !== timezone ? ['timezone'] : [])];
        if (!fields.length) {
          ctx.out.add('unchanged', linked ? item : { ...item, reason: 'matched an existing site by name' });
        } else if (fields.includes('name') && orgSites.some((s) => s.id !== site.id && s.name.toLowerCase() === loc.name.toLowerCase())) {
          ctx.out.add('unresolved', { ...item, reason: 'another site of the organization has this name' });
        } else {
          await this.sites.setNameAndTimezone(site.id, loc.name, timezone);
          Object.assign(site, { name: loc.name, timezone });
          ctx.out.add('updated', { ...item, fields });
        }
      }
      const needsMain = c.locations.length === 0 || c.devices.some((d) => !d.item.locationExternalId);
      if (needsMain) {
        const main = orgSites.find((s) => s.name.toLowerCase() === DEFAULT_SITE.toLowerCase());
        const item = { kind: 'site' as const, ref: c.ref, name: DEFAULT_SITE, reason: 'default site for records without a location' };
        if (main) ctx.out.add('unchanged', item);
        else {
          await this.sites.insertWithId({ id: randomUUID(), orgId, name: DEFAULT_SITE, timezone: 'UTC' });
          ctx.out.add('created', item);
        }
      }
    }
    await this.links.saveLinks(ctx.partnerId, ctx.source, links);
  }
}
