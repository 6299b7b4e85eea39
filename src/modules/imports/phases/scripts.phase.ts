import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { canonicalMapping, canonicalParameters } from '../../content/scripts/script-shape.util';
import type { ImportPlan, Planned } from '../document/import-plan';
import type { SourceScript } from '../document/interchange.types';
import { ImportLinkRepository, LinkWrite } from '../import-link.repository';
import type { ScriptRecord } from '../../content/scripts/script-batch.repository';
import { ScriptService } from '../../content/scripts/script.service';
import { mergeLater } from './merge.util';
import { changedFields, documentFields, ImportPhase, PhaseContext } from './phase.types';

const COMPARED = ['description', 'category', 'language', 'body', 'parameters', 'run_as', 'timeout_seconds', 'exit_code_severity_mapping'] as const;
/** The document's names of the compared columns. */
const DOCUMENT_NAMES = { run_as: 'runAs', timeout_seconds: 'timeoutSeconds', exit_code_severity_mapping: 'exitCodeSeverityMapping' };

/**
 * Scripts (spec 2.10.5): account scripts become partner-wide, customer and location scripts
 * belong to the customer's organization (location scripts of one name merge, the later row
 * winning). Matched by link, else by name within the owner.
 */
@Injectable()
export class ScriptsPhase implements ImportPhase {
  readonly name = 'scripts' as const;

  constructor(
    private readonly links: ImportLinkRepository,
    private readonly scripts: ScriptService,
  ) {}

  async run(plan: ImportPlan, ctx: PhaseContext): Promise<void> {
    const orgIds = plan.customers.map((c) => ctx.orgs.get(c.ref)).filter((x): x is string => !!x);
    const existing = await this.scripts.ofOwners(ctx.partnerId, orgIds);
    const byId = new Map(existing.map((s) => [s.id, s]));
    const links = new Map((await this.links.links(ctx.partnerId, ctx.source, 'script')).map((l) => [`${l.namespace ?? ''}|${l.external_id}`, l.local_id]));
    const newLinks: LinkWrite[] = [];

    const apply = async (rows: Planned<SourceScript>[], overridden: string[], orgId: string | null) => {
      const winner = rows[rows.length - 1];
      const s = winner.item;
      const item = { kind: 'script' as const, ref: winner.ref, externalId: s.externalId, name: s.name, ...(overridden.length ? { mergedFrom: overridden } : {}) };
      const mine = (x: ScriptRecord) => (orgId ? x.org_id === orgId : x.partner_id === ctx.partnerId);
      const linked = rows.map((r) => byId.get(links.get(`${orgId ?? ''}|${r.item.externalId}`) ?? '')).find((x) => x && mine(x));
      const current = linked ?? existing.find((x) => mine(x) && x.name.toLowerCase() === s.name.toLowerCase());
      const desired: ScriptRecord = {
        id: current?.id ?? randomUUID(),
        partner_id: orgId ? null : ctx.partnerId,
        org_id: orgId,
        name: s.name,
        description: s.description ?? null,
        category: s.category ?? 'General',
        language: s.language,
        body: s.body,
        parameters: canonicalParameters(s.parameters ?? []),
        run_as: s.runAs ?? 'system',
        timeout_seconds: s.timeoutSeconds ?? 300,
        exit_code_severity_mapping: canonicalMapping(s.exitCodeSeverityMapping ?? []),
      };
      if (current && existing.some((x) => x.id !== current.id && mine(x) && x.name.toLowerCase() === s.name.toLowerCase())) {
        return ctx.out.add('unresolved', { ...item, reason: 'another script of the owner has this name' });
      }
      if (!current) {
        await this.scripts.save(desired, true);
        existing.push(desired);
        ctx.out.add('created', item);
      } else {
        const fields = documentFields(changedFields({ ...current }, { ...desired }, ['name', ...COMPARED]), DOCUMENT_NAMES);
        if (fields.length) {
          await this.scripts.save(desired, false);
          Object.assign(current, desired);
          ctx.out.add('updated', { ...item, fields });
        } else ctx.out.add('unchanged', item);
      }
      for (const r of rows) newLinks.push({ kind: 'script', namespace: orgId, externalId: r.item.externalId, orgId, localId: desired.id });
    };

    for (const s of plan.account.scripts) await apply([s], [], null);
    for (const c of plan.customers) {
      const orgId = ctx.orgs.get(c.ref);
      if (!orgId) {
        for (const s of c.scripts) ctx.out.add('unresolved', { kind: 'script', ref: s.ref, externalId: s.item.externalId, name: s.item.name, reason: 'the customer was not imported' });
        continue;
      }
      const merged = mergeLater(c.scripts, (s) => s.name.toLowerCase(), ['description', 'category', 'language', 'body', 'runAs', 'timeoutSeconds', 'parameters', 'exitCodeSeverityMapping'], 'script', ctx.out.conflicts);
      for (const m of merged) await apply(m.rows, m.overridden, orgId);
    }
    await this.links.saveLinks(ctx.partnerId, ctx.source, newLinks);
  }
}
