import { Injectable } from '@nestjs/common';
import { checkValue, CustomFieldValue, parseTextValue } from '../../content/custom-fields/custom-field-value.util';
import { stableJson } from '../../../common/json.util';
import type { ImportPlan } from '../document/import-plan';
import { ImportLinkRepository } from '../import-link.repository';
import { CustomFieldService } from '../../content/custom-fields/custom-field.service';
import type { CustomFieldRecord } from '../../content/custom-fields/custom-field-batch.repository';
import { DeviceService } from '../../tenancy/devices/device.service';
import type { ReportItem } from '../import-report';
import { ImportPhase, importableCustomers, PhaseContext } from './phase.types';

type Resolved = { deviceId: string } | { reason: string };

/**
 * Custom-field values (spec 2.10.4): each row names its device by source device id or by
 * hostname; a row that resolves to no device or to several is reported, never guessed. A value
 * already on the device is left alone unless the import says overwrite.
 */
@Injectable()
export class CustomFieldValuesPhase implements ImportPhase {
  readonly name = 'customFieldValues' as const;

  constructor(
    private readonly links: ImportLinkRepository,
    private readonly fields: CustomFieldService,
    private readonly devices: DeviceService,
  ) {}

  async run(plan: ImportPlan, ctx: PhaseContext): Promise<void> {
    const customers = importableCustomers(plan, ctx, (c) => c.values.map((v) => ({ ref: v.ref, kind: 'custom_field_value' as const, externalId: v.item.deviceExternalId })));
    const orgIds = customers.map((c) => c.orgId);
    const defs = await this.fields.definitionsOf(ctx.partnerId, orgIds);
    const devices = await this.devices.ofOrgs(orgIds);
    const deviceIds = new Set(devices.map((d) => d.id));
    const byHost = new Map<string, string[]>();
    for (const d of devices) {
      const k = `${d.org_id}|${d.hostname.toLowerCase()}`;
      byHost.set(k, [...(byHost.get(k) ?? []), d.id]);
    }
    // A document names devices of its own source; a CSV file may name devices from any earlier import.
    const idLinks = new Map<string, string[]>();
    const addLink = (orgId: string, ext: string, local: string) => {
      if (!deviceIds.has(local)) return;
      const k = `${orgId}|${ext}`;
      idLinks.set(k, [...new Set([...(idLinks.get(k) ?? []), local])]);
    };
    if (plan.format === 'interchange') {
      for (const l of await this.links.links(ctx.partnerId, ctx.source, 'device')) addLink(l.namespace as string, l.external_id, l.local_id);
    } else {
      for (const orgId of orgIds) for (const l of await this.links.deviceLinksOfOrg(orgId)) addLink(orgId, l.external_id, l.local_id);
    }
    const existing = new Map((await this.fields.valuesOf(orgIds)).map((v) => [`${v.device_id}|${v.definition_id}`, v.value]));

    const resolveDevice = (orgId: string, ext: string | undefined, hostname: string | undefined): Resolved => {
      if (ext !== undefined) {
        const hits = idLinks.get(`${orgId}|${ext}`) ?? [];
        if (hits.length === 1) return { deviceId: hits[0] };
        if (hits.length > 1) return { reason: `${hits.length} devices were imported with source device id ${ext}` };
        if (hostname === undefined) return { reason: `no device was imported with source device id ${ext}` };
      }
      const hits = byHost.get(`${orgId}|${(hostname as string).toLowerCase()}`) ?? [];
      if (hits.length === 1) return { deviceId: hits[0] };
      return { reason: hits.length ? `${hits.length} devices of the organization have hostname ${hostname}` : `no device of the organization has hostname ${hostname}` };
    };

    const writes = new Map<string, { row: { org_id: string; device_id: string; definition_id: string; value: CustomFieldValue }; outcome: 'created' | 'updated'; item: ReportItem }>();
    for (const { customer, orgId } of customers) {
      const fields = new Map<string, CustomFieldRecord>();
      for (const d of defs) if (d.partner_id || d.org_id === orgId) fields.set(d.key, d);
      for (const { ref, item: src } of customer.values) {
        const item: ReportItem = { kind: 'custom_field_value', ref, name: src.field, ...(src.deviceExternalId !== undefined ? { externalId: src.deviceExternalId } : {}) };
        const def = fields.get(src.field);
        if (!def) {
          ctx.out.add('unresolved', { ...item, reason: `no custom field with key ${src.field} applies to the organization` });
          continue;
        }
        const device = resolveDevice(orgId, src.deviceExternalId, src.hostname);
        if ('reason' in device) {
          ctx.out.add('unresolved', { ...item, reason: device.reason });
          continue;
        }
        const checked = src.text ? parseTextValue(def, String(src.value)) : checkValue(def, src.value);
        if (!checked.ok) {
          ctx.out.add('unresolved', { ...item, reason: `invalid value: ${checked.message}` });
          continue;
        }
        const key = `${device.deviceId}|${def.id}`;
        const earlier = writes.get(key);
        if (earlier) {
          writes.delete(key);
          ctx.out.add('unresolved', { ...earlier.item, reason: `superseded by ${ref}, a later row for the same device and field` });
        }
        const current = existing.get(key);
        if (current === undefined || (ctx.overwrite && stableJson(current) !== stableJson(checked.value))) {
          writes.set(key, { row: { org_id: orgId, device_id: device.deviceId, definition_id: def.id, value: checked.value }, outcome: current === undefined ? 'created' : 'updated', item });
        } else if (stableJson(current) === stableJson(checked.value)) {
          ctx.out.add('unchanged', item);
        } else {
          ctx.out.add('unchanged', { ...item, reason: 'the device already has another value; kept (overwrite is off)' });
        }
      }
    }
    for (const w of writes.values()) ctx.out.add(w.outcome, w.outcome === 'updated' ? { ...w.item, fields: ['value'] } : w.item);
    await this.fields.upsertValues([...writes.values()].map((w) => w.row));
  }
}
