import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { canonicalContact, changedContactFields, emailKey, nameKey } from '../../content/contacts/contact-fields.util';
import type { ImportPlan } from '../document/import-plan';
import { ImportLinkRepository, MatchWrite } from '../import-link.repository';
import { ContactService } from '../../content/contacts/contact.service';
import type { ContactRecord } from '../../content/contacts/contact-batch.repository';
import { SiteService } from '../../tenancy/sites/site.service';
import { documentFields, ImportPhase, importableCustomers, PhaseContext, siteField } from './phase.types';
import { loadSites } from './site-lookup';

/**
 * Contacts (spec 2.10.2): matched on externalId within the organization, so a re-import
 * changes nothing. A new record that resembles an existing contact without an externalId (same
 * email, or the same name) is held back as a pending match until someone acknowledges it;
 * contacts that carry an externalId belong to their source and are never fuzzy candidates.
 */
@Injectable()
export class ContactsPhase implements ImportPhase {
  readonly name = 'contacts' as const;

  constructor(
    private readonly links: ImportLinkRepository,
    private readonly sites: SiteService,
    private readonly contacts: ContactService,
  ) {}

  async run(plan: ImportPlan, ctx: PhaseContext): Promise<void> {
    const customers = importableCustomers(plan, ctx, (c) => c.contacts.map((x) => ({ ref: x.ref, kind: 'contact' as const, externalId: x.item.externalId })));
    const orgIds = customers.map((c) => c.orgId);
    const sites = await loadSites(this.sites, this.links, ctx, orgIds);
    const existing = await this.contacts.ofOrgs(orgIds);
    const byExternal = new Map<string, ContactRecord>();
    const byEmail = new Map<string, ContactRecord>();
    const byName = new Map<string, ContactRecord>();
    for (const c of existing) {
      if (c.external_id) {
        byExternal.set(`${c.org_id}|${c.external_id}`, c);
        continue;
      }
      // The oldest-inserted candidate wins a tie; Map keeps the first set.
      const e = emailKey(c.email);
      const n = nameKey(c.name);
      if (e && !byEmail.has(`${c.org_id}|${e}`)) byEmail.set(`${c.org_id}|${e}`, c);
      if (n && !byName.has(`${c.org_id}|${n}`)) byName.set(`${c.org_id}|${n}`, c);
    }
    const pending = new Map((await this.links.pendingMatches(orgIds)).map((m) => [`${m.org_id}|${m.external_id}`, m]));

    const inserts: ContactRecord[] = [];
    const updates: ContactRecord[] = [];
    const matches: MatchWrite[] = [];
    for (const { customer, orgId } of customers) {
      for (const { ref, item: src } of customer.contacts) {
        const item = { kind: 'contact' as const, ref, externalId: src.externalId, name: src.name };
        let siteId: string | null = null;
        if (src.locationExternalId) siteId = sites.byLocation(orgId, src.locationExternalId) ?? null;
        else if (src.siteName) siteId = sites.byName(orgId, src.siteName) ?? null;
        if ((src.locationExternalId || src.siteName) && !siteId) {
          ctx.out.add('unresolved', { ...item, reason: src.siteName ? `the organization has no site named "${src.siteName}"` : 'its location was not imported' });
          continue;
        }
        const desired = canonicalContact({ ...src, siteId });
        const current = byExternal.get(`${orgId}|${src.externalId}`);
        if (current) {
          const fields = documentFields(changedContactFields(canonicalContact({ ...current, siteId: current.site_id }), desired), { siteId: siteField(plan) });
          if (fields.length) {
            updates.push(row(current.id, orgId, desired, src.externalId));
            ctx.out.add('updated', { ...item, fields });
          } else ctx.out.add('unchanged', item);
          continue;
        }
        const waiting = pending.get(`${orgId}|${src.externalId}`);
        if (waiting) {
          ctx.out.add('heldBack', { ...item, reason: `still waiting for acknowledgement (${waiting.reason} match)`, candidateContactId: waiting.candidate_id ?? undefined });
          continue;
        }
        const email = emailKey(desired.email);
        const byMail = email ? byEmail.get(`${orgId}|${email}`) : undefined;
        const candidate = byMail ?? byName.get(`${orgId}|${nameKey(desired.name)}`);
        if (candidate) {
          const reason = byMail ? 'email' : 'name';
          matches.push({ org_id: orgId, source_ref: ref, external_id: src.externalId, source: { ...desired, externalId: src.externalId }, candidate_id: candidate.id, reason });
          ctx.out.add('heldBack', { ...item, reason: `resembles an existing contact (same ${reason})`, candidateContactId: candidate.id });
          continue;
        }
        inserts.push(row(randomUUID(), orgId, desired, src.externalId));
        ctx.out.add('created', item);
      }
    }
    await this.contacts.upsertMany(inserts, updates);
    await this.links.insertMatches(ctx.importId, matches);
  }
}

function row(id: string, orgId: string, c: ReturnType<typeof canonicalContact>, externalId: string): ContactRecord {
  return { id, org_id: orgId, site_id: c.siteId, name: c.name, email: c.email, phones: c.phones, title: c.title, notes: c.notes, external_id: externalId };
}
