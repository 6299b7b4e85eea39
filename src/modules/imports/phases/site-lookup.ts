import type { SiteService } from '../../tenancy/sites/site.service';
import type { ImportLinkRepository } from '../import-link.repository';
import { DEFAULT_SITE } from './organizations.phase';
import type { PhaseContext } from './phase.types';

export interface SiteLookup {
  /** The site a source location became; undefined when it was not imported. */
  byLocation(orgId: string, locationExternalId: string): string | undefined;
  byName(orgId: string, name: string): string | undefined;
  main(orgId: string): string | undefined;
}

export async function loadSites(siteService: SiteService, linkRepo: ImportLinkRepository, ctx: PhaseContext, orgIds: string[]): Promise<SiteLookup> {
  const sites = await siteService.ofOrgs(orgIds);
  const links = new Map((await linkRepo.links(ctx.partnerId, ctx.source, 'location')).map((l) => [`${l.namespace}|${l.external_id}`, l.local_id]));
  const ids = new Set(sites.map((s) => s.id));
  const names = new Map(sites.map((s) => [`${s.org_id}|${s.name.toLowerCase()}`, s.id]));
  return {
    byLocation: (orgId, ext) => {
      const id = links.get(`${orgId}|${ext}`);
      return id && ids.has(id) ? id : undefined;
    },
    byName: (orgId, name) => names.get(`${orgId}|${name.toLowerCase()}`),
    main: (orgId) => names.get(`${orgId}|${DEFAULT_SITE.toLowerCase()}`),
  };
}
