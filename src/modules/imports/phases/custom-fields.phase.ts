import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { canonicalOptions, CustomFieldValidation } from '../../content/custom-fields/custom-field-value.util';
import type { ImportPlan, Planned } from '../document/import-plan';
import type { SourceCustomField } from '../document/interchange.types';
import { ImportLinkRepository, LinkWrite } from '../import-link.repository';
import { CustomFieldService } from '../../content/custom-fields/custom-field.service';
import type { CustomFieldRecord } from '../../content/custom-fields/custom-field-batch.repository';
import type { ReportItem } from '../import-report';
import { mergeLater } from './merge.util';
import { changedFields, ImportPhase, PhaseContext } from './phase.types';

const COMPARED = ['name', 'description', 'options', 'validation'] as const;

function desiredOf(f: SourceCustomField): Pick<CustomFieldRecord, 'name' | 'description' | 'options' | 'validation'> {
  return { name: f.name, description: f.description ?? null, options: canonicalOptions(f.options), validation: (f.validation ?? {}) as CustomFieldValidation };
}

/**
 * Custom field definitions (spec 2.10.3): account-level fields become partner-wide;
 * customer- and location-level fields become fields of the customer's organization, a key
 * defined by two locations merging into one, the later row winning (reported as a conflict
 * when they disagree). A type never changes on re-import, and options still used by values
 * are never removed.
 */
@Injectable()
export class CustomFieldsPhase implements ImportPhase {
  readonly name = 'customFields' as const;

  constructor(
    private readonly links: ImportLinkRepository,
    private readonly fields: CustomFieldService,
  ) {}

  async run(plan: ImportPlan, ctx: PhaseContext): Promise<void> {
    const orgIds = plan.customers.map((c) => ctx.orgs.get(c.ref)).filter((x): x is string => !!x);
    const defs = await this.fields.definitionsOf(ctx.partnerId, orgIds);
    const linkRows = await this.links.links(ctx.partnerId, ctx.source, 'custom_field');
    const links = new Map(linkRows.map((l) => [`${l.namespace ?? ''}|${l.external_id}`, l.local_id]));
    const byId = new Map(defs.map((d) => [d.id, d]));
    const partnerKeys = new Map(defs.filter((d) => d.partner_id).map((d) => [d.key, d]));
    const orgKeys = await this.fields.orgFieldKeys(ctx.partnerId);
    const newLinks: LinkWrite[] = [];

    const apply = async (rows: Planned<SourceCustomField>[], overridden: string[], owner: { orgId: string | null }, existingByKey: Map<string, CustomFieldRecord>) => {
      const winner = rows[rows.length - 1];
      const f = winner.item;
      const item: ReportItem = { kind: 'custom_field', ref: winner.ref, externalId: f.externalId, name: f.key, ...(overridden.length ? { mergedFrom: overridden } : {}) };
      const ns = owner.orgId ?? '';
      const linked = rows.map((r) => (r.item.externalId ? byId.get(links.get(`${ns}|${r.item.externalId}`) ?? '') : undefined)).find(Boolean);
      const current = linked ?? existingByKey.get(f.key);
      const desired = desiredOf(f);
      let id: string;
      if (!current) {
        if (!owner.orgId && orgKeys.has(f.key)) return ctx.out.add('unresolved', { ...item, reason: 'an organization field of the partner already uses this key' });
        if (owner.orgId && partnerKeys.has(f.key)) return ctx.out.add('unresolved', { ...item, reason: 'a partner-wide field already uses this key' });
        id = randomUUID();
        const row: CustomFieldRecord = { id, partner_id: owner.orgId ? null : ctx.partnerId, org_id: owner.orgId, key: f.key, type: f.type, ...desired };
        await this.fields.saveDefinition(row, true);
        existingByKey.set(f.key, row);
        byId.set(id, row);
        ctx.out.add('created', item);
      } else {
        id = current.id;
        if (current.type !== f.type) return ctx.out.add('unresolved', { ...item, reason: `the field exists with type ${current.type}; a type never changes` });
        const fields = changedFields({ ...current }, { ...current, ...desired }, [...COMPARED]);
        const removed = current.options.filter((o) => !desired.options.includes(o));
        const inUse = fields.includes('options') ? await this.fields.optionsInUse(current.id, removed) : [];
        if (inUse.length) return ctx.out.add('unresolved', { ...item, reason: `devices still use options that would be removed: ${inUse.join(', ')}` });
        if (fields.length) {
          await this.fields.saveDefinition({ ...current, ...desired }, false);
          Object.assign(current, desired);
          ctx.out.add('updated', { ...item, fields });
        } else ctx.out.add('unchanged', item);
      }
      for (const r of rows) {
        if (r.item.externalId) newLinks.push({ kind: 'custom_field', namespace: owner.orgId, externalId: r.item.externalId, orgId: owner.orgId, localId: id });
      }
    };

    for (const f of plan.account.customFields) await apply([f], [], { orgId: null }, partnerKeys);
    for (const c of plan.customers) {
      const orgId = ctx.orgs.get(c.ref);
      if (!orgId) {
        for (const f of c.customFields) ctx.out.add('unresolved', { kind: 'custom_field', ref: f.ref, name: f.item.key, reason: 'the customer was not imported' });
        continue;
      }
      const own = new Map(defs.filter((d) => d.org_id === orgId).map((d) => [d.key, d]));
      for (const m of mergeLater(c.customFields, (f) => f.key, ['name', 'type', 'description', 'options', 'validation'], 'custom_field', ctx.out.conflicts)) {
        await apply(m.rows, m.overridden, { orgId }, own);
      }
    }
    await this.links.saveLinks(ctx.partnerId, ctx.source, newLinks);
  }
}
