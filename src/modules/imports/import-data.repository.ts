import { Injectable } from '@nestjs/common';
import { Db } from '../../infra/database/db.service';
import type { ContactPhone } from '../content/contacts/contact-fields.util';
import type { CustomFieldType, CustomFieldValidation, CustomFieldValue } from '../content/custom-fields/custom-field-value.util';
import type { ExitCodeSeverity, RunAs, ScriptLanguage, ScriptParameter } from '../content/scripts/script-shape.util';
import type { PolicyType } from '../policies/features/policy-feature.types';

export type LinkKind = 'customer' | 'location' | 'device' | 'device_group' | 'custom_field' | 'script' | 'policy';

export interface Link {
  namespace: string | null;
  external_id: string;
  local_id: string;
}

export interface LinkWrite {
  kind: LinkKind;
  namespace: string | null;
  externalId: string;
  orgId: string | null;
  localId: string;
}

export interface DeviceRow {
  id: string;
  org_id: string;
  hostname: string;
  os_type: string | null;
  site_id: string;
  status: string;
}

export interface ContactRow {
  id: string;
  org_id: string;
  site_id: string | null;
  name: string;
  email: string | null;
  phones: ContactPhone[];
  title: string | null;
  notes: string | null;
  external_id: string | null;
}

export interface DefinitionRow {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  key: string;
  name: string;
  description: string | null;
  type: CustomFieldType;
  options: string[];
  validation: CustomFieldValidation;
}

export interface ScriptRow {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  name: string;
  description: string | null;
  category: string;
  language: ScriptLanguage;
  body: string;
  parameters: ScriptParameter[];
  run_as: RunAs;
  timeout_seconds: number;
  exit_code_severity_mapping: ExitCodeSeverity[];
}

export interface PolicyRow {
  id: string;
  partner_id: string | null;
  org_id: string | null;
  type: PolicyType;
  name: string;
  description: string | null;
  enabled: boolean;
  features: Record<string, unknown>;
}

export interface AssignmentRow {
  id: string;
  policy_id: string;
  target_level: string;
  target_id: string;
  priority: number;
}

const json = (v: unknown) => JSON.stringify(v);

/**
 * The importer's reads and writes, set-based: one statement per kind of change for a whole
 * phase (jsonb_to_recordset), so tens of thousands of rows cost a handful of round trips.
 */
@Injectable()
export class ImportDataRepository {
  constructor(private readonly db: Db) {}

  /** Serialises the phases of concurrent imports of one partner (released at commit). */
  async lockPartner(partnerId: string): Promise<void> {
    await this.db.rows(`SELECT pg_advisory_xact_lock(hashtext('import:' || $1::text))`, [partnerId]);
  }

  links(partnerId: string, source: string, kind: LinkKind): Promise<Link[]> {
    return this.db.rows<Link>(`SELECT namespace, external_id, local_id FROM import_links WHERE partner_id = $1 AND source_system = $2 AND kind = $3`, [partnerId, source, kind]);
  }

  /** Device links of one organization from any source (CSV rows carry no source name). */
  deviceLinksOfOrg(orgId: string): Promise<{ external_id: string; local_id: string }[]> {
    return this.db.rows(`SELECT external_id, local_id FROM import_links WHERE org_id = $1 AND kind = 'device'`, [orgId]);
  }

  async saveLinks(partnerId: string, source: string, links: LinkWrite[]): Promise<void> {
    if (!links.length) return;
    await this.db.exec(
      `INSERT INTO import_links (partner_id, source_system, kind, namespace, external_id, org_id, local_id)
       SELECT $1, $2, x.kind, x.namespace, x.external_id, x.org_id, x.local_id
         FROM jsonb_to_recordset($3::jsonb) AS x(kind text, namespace uuid, external_id text, org_id uuid, local_id uuid)
       ON CONFLICT (partner_id, source_system, kind, namespace, external_id)
       DO UPDATE SET local_id = EXCLUDED.local_id, org_id = EXCLUDED.org_id
       WHERE (import_links.local_id, import_links.org_id) IS DISTINCT FROM (EXCLUDED.local_id, EXCLUDED.org_id)`,
      [partnerId, source, json(links.map((l) => ({ kind: l.kind, namespace: l.namespace, external_id: l.externalId, org_id: l.orgId, local_id: l.localId })))],
    );
  }

  // Organizations and sites

  organizations(partnerId: string): Promise<{ id: string; name: string }[]> {
    return this.db.rows(`SELECT id, name FROM organizations WHERE partner_id = $1`, [partnerId]);
  }

  async insertOrganization(id: string, partnerId: string, name: string): Promise<void> {
    await this.db.exec(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, $3)`, [id, partnerId, name]);
  }

  async renameOrganization(id: string, name: string): Promise<void> {
    await this.db.exec(`UPDATE organizations SET name = $2, updated_at = now() WHERE id = $1`, [id, name]);
  }

  sites(orgIds: string[]): Promise<{ id: string; org_id: string; name: string; timezone: string }[]> {
    return this.db.rows(`SELECT id, org_id, name, timezone FROM sites WHERE org_id = ANY ($1::uuid[])`, [orgIds]);
  }

  async insertSite(s: { id: string; orgId: string; name: string; timezone: string }): Promise<void> {
    await this.db.exec(`INSERT INTO sites (id, org_id, name, timezone) VALUES ($1, $2, $3, $4)`, [s.id, s.orgId, s.name, s.timezone]);
  }

  async updateSite(id: string, name: string, timezone: string): Promise<void> {
    await this.db.exec(`UPDATE sites SET name = $2, timezone = $3, updated_at = now() WHERE id = $1`, [id, name, timezone]);
  }

  // Devices

  devices(orgIds: string[]): Promise<DeviceRow[]> {
    return this.db.rows<DeviceRow>(`SELECT id, org_id, hostname, os_type, site_id, status FROM devices WHERE org_id = ANY ($1::uuid[])`, [orgIds]);
  }

  async insertDevices(rows: DeviceRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO devices (id, org_id, site_id, hostname, os_type, status)
       SELECT x.id, x.org_id, x.site_id, x.hostname, x.os_type, x.status
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id uuid, site_id uuid, hostname text, os_type text, status text)`,
      [json(rows)],
    );
  }

  async updateDevices(rows: DeviceRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `UPDATE devices d SET site_id = x.site_id, hostname = x.hostname, os_type = x.os_type, status = x.status, updated_at = now()
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id uuid, site_id uuid, hostname text, os_type text, status text)
        WHERE d.org_id = x.org_id AND d.id = x.id`,
      [json(rows)],
    );
  }

  // Contacts and held-back matches

  contacts(orgIds: string[]): Promise<ContactRow[]> {
    return this.db.rows<ContactRow>(`SELECT id, org_id, site_id, name, email, phones, title, notes, external_id FROM contacts WHERE org_id = ANY ($1::uuid[]) ORDER BY created_at, id`, [orgIds]);
  }

  contact(orgId: string, id: string): Promise<ContactRow | null> {
    return this.db.one<ContactRow>(`SELECT id, org_id, site_id, name, email, phones, title, notes, external_id FROM contacts WHERE org_id = $1 AND id = $2`, [orgId, id]);
  }

  async insertContacts(rows: ContactRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO contacts (id, org_id, site_id, name, email, phones, title, notes, external_id)
       SELECT x.id, x.org_id, x.site_id, x.name, x.email, x.phones, x.title, x.notes, x.external_id
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id uuid, site_id uuid, name text, email text, phones jsonb, title text, notes text, external_id text)`,
      [json(rows)],
    );
  }

  async updateContacts(rows: ContactRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `UPDATE contacts c SET site_id = x.site_id, name = x.name, email = x.email, phones = x.phones, title = x.title, notes = x.notes,
              external_id = x.external_id, updated_at = now()
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id uuid, site_id uuid, name text, email text, phones jsonb, title text, notes text, external_id text)
        WHERE c.org_id = x.org_id AND c.id = x.id`,
      [json(rows)],
    );
  }

  pendingMatches(orgIds: string[]): Promise<{ org_id: string; external_id: string; candidate_id: string | null; reason: string }[]> {
    return this.db.rows(`SELECT org_id, external_id, candidate_id, reason FROM import_matches WHERE org_id = ANY ($1::uuid[]) AND status = 'pending'`, [orgIds]);
  }

  async insertMatches(importId: string, rows: { org_id: string; source_ref: string; external_id: string; source: object; candidate_id: string; reason: string }[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO import_matches (org_id, import_id, source_ref, external_id, source, candidate_id, reason)
       SELECT x.org_id, $1, x.source_ref, x.external_id, x.source, x.candidate_id, x.reason
         FROM jsonb_to_recordset($2::jsonb) AS x(org_id uuid, source_ref text, external_id text, source jsonb, candidate_id uuid, reason text)`,
      [importId, json(rows)],
    );
  }

  // Custom fields and values

  definitions(partnerId: string, orgIds: string[]): Promise<DefinitionRow[]> {
    return this.db.rows<DefinitionRow>(
      `SELECT id, partner_id, org_id, key, name, description, type, options, validation FROM custom_field_definitions
        WHERE partner_id = $1 OR org_id = ANY ($2::uuid[])`,
      [partnerId, orgIds],
    );
  }

  /** Keys of organization fields anywhere under the partner (a partner-wide key must not reuse one). */
  async orgFieldKeys(partnerId: string): Promise<Set<string>> {
    const rows = await this.db.rows<{ key: string }>(
      `SELECT DISTINCT d.key FROM custom_field_definitions d JOIN organizations o ON o.id = d.org_id WHERE o.partner_id = $1`,
      [partnerId],
    );
    return new Set(rows.map((r) => r.key));
  }

  async insertDefinition(d: DefinitionRow): Promise<void> {
    await this.db.exec(
      `INSERT INTO custom_field_definitions (id, partner_id, org_id, key, name, description, type, options, validation)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb)`,
      [d.id, d.partner_id, d.org_id, d.key, d.name, d.description, d.type, json(d.options), json(d.validation)],
    );
  }

  async updateDefinition(d: DefinitionRow): Promise<void> {
    await this.db.exec(
      `UPDATE custom_field_definitions SET name = $2, description = $3, options = $4::jsonb, validation = $5::jsonb, updated_at = now() WHERE id = $1`,
      [d.id, d.name, d.description, json(d.options), json(d.validation)],
    );
  }

  async optionsInUse(definitionId: string, options: string[]): Promise<string[]> {
    if (!options.length) return [];
    const rows = await this.db.rows<{ option: string }>(
      `SELECT o AS option FROM unnest($2::text[]) o
        WHERE EXISTS (SELECT 1 FROM custom_field_values v WHERE v.definition_id = $1 AND (v.value = to_jsonb(o) OR v.value @> jsonb_build_array(o)))`,
      [definitionId, options],
    );
    return rows.map((r) => r.option);
  }

  values(orgIds: string[]): Promise<{ org_id: string; device_id: string; definition_id: string; value: CustomFieldValue }[]> {
    return this.db.rows(`SELECT org_id, device_id, definition_id, value FROM custom_field_values WHERE org_id = ANY ($1::uuid[])`, [orgIds]);
  }

  /** Writes values; rows already present are replaced (the caller decides which rows to send). */
  async upsertValues(rows: { org_id: string; device_id: string; definition_id: string; value: CustomFieldValue }[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO custom_field_values (org_id, device_id, definition_id, value)
       SELECT x.org_id, x.device_id, x.definition_id, x.value
         FROM jsonb_to_recordset($1::jsonb) AS x(org_id uuid, device_id uuid, definition_id uuid, value jsonb)
       ON CONFLICT (org_id, device_id, definition_id) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [json(rows)],
    );
  }

  // Dynamic device groups

  groups(orgIds: string[]): Promise<{ id: string; org_id: string; site_id: string | null; name: string; kind: string; filter: Record<string, unknown> | null }[]> {
    return this.db.rows(`SELECT id, org_id, site_id, name, kind, filter FROM device_groups WHERE org_id = ANY ($1::uuid[])`, [orgIds]);
  }

  async insertGroup(g: { id: string; orgId: string; siteId: string | null; name: string; filter: object }): Promise<void> {
    await this.db.exec(`INSERT INTO device_groups (id, org_id, site_id, name, kind, filter) VALUES ($1, $2, $3, $4, 'dynamic', $5::jsonb)`, [g.id, g.orgId, g.siteId, g.name, json(g.filter)]);
  }

  async updateGroup(g: { id: string; siteId: string | null; name: string; filter: object }): Promise<void> {
    await this.db.exec(`UPDATE device_groups SET site_id = $2, name = $3, filter = $4::jsonb, updated_at = now() WHERE id = $1 AND kind = 'dynamic'`, [g.id, g.siteId, g.name, json(g.filter)]);
  }

  // Scripts

  scripts(partnerId: string, orgIds: string[]): Promise<ScriptRow[]> {
    return this.db.rows<ScriptRow>(`SELECT * FROM scripts WHERE partner_id = $1 OR org_id = ANY ($2::uuid[])`, [partnerId, orgIds]);
  }

  async saveScript(s: ScriptRow, insert: boolean): Promise<void> {
    const params = [s.id, s.partner_id, s.org_id, s.name, s.description, s.category, s.language, s.body, json(s.parameters), s.run_as, s.timeout_seconds, json(s.exit_code_severity_mapping)];
    await this.db.exec(
      insert
        ? `INSERT INTO scripts (id, partner_id, org_id, name, description, category, language, body, parameters, run_as, timeout_seconds, exit_code_severity_mapping)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12::jsonb)`
        : `UPDATE scripts SET name = $4, description = $5, category = $6, language = $7, body = $8, parameters = $9::jsonb, run_as = $10,
                  timeout_seconds = $11, exit_code_severity_mapping = $12::jsonb, updated_at = now()
            WHERE id = $1 AND partner_id IS NOT DISTINCT FROM $2 AND org_id IS NOT DISTINCT FROM $3`,
      params,
    );
  }

  // Policies and assignments

  policies(partnerId: string, orgIds: string[]): Promise<PolicyRow[]> {
    return this.db.rows<PolicyRow>(`SELECT id, partner_id, org_id, type, name, description, enabled, features FROM policies WHERE partner_id = $1 OR org_id = ANY ($2::uuid[])`, [partnerId, orgIds]);
  }

  async savePolicy(p: PolicyRow, insert: boolean): Promise<void> {
    const params = [p.id, p.partner_id, p.org_id, p.type, p.name, p.description, p.enabled, json(p.features)];
    await this.db.exec(
      insert
        ? `INSERT INTO policies (id, partner_id, org_id, type, name, description, enabled, features) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)`
        : `UPDATE policies SET name = $5, description = $6, enabled = $7, features = $8::jsonb, updated_at = now()
            WHERE id = $1 AND partner_id IS NOT DISTINCT FROM $2 AND org_id IS NOT DISTINCT FROM $3 AND type = $4`,
      params,
    );
  }

  assignments(policyIds: string[]): Promise<AssignmentRow[]> {
    return this.db.rows<AssignmentRow>(
      `SELECT id, policy_id, target_level, coalesce(site_id, device_group_id, device_id, org_id, partner_id) AS target_id, priority
         FROM policy_assignments WHERE policy_id = ANY ($1::uuid[])`,
      [policyIds],
    );
  }

  async insertAssignments(rows: { partner_id: string; org_id: string | null; policy_id: string; target_level: string; site_id: string | null; device_group_id: string | null; device_id: string | null; priority: number }[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `INSERT INTO policy_assignments (partner_id, org_id, policy_id, target_level, site_id, device_group_id, device_id, priority)
       SELECT x.partner_id, x.org_id, x.policy_id, x.target_level, x.site_id, x.device_group_id, x.device_id, x.priority
         FROM jsonb_to_recordset($1::jsonb) AS x(partner_id uuid, org_id uuid, policy_id uuid, target_level text, site_id uuid, device_group_id uuid, device_id uuid, priority int)`,
      [json(rows)],
    );
  }

  async updateAssignmentPriorities(rows: { id: string; priority: number }[]): Promise<void> {
    if (!rows.length) return;
    await this.db.exec(
      `UPDATE policy_assignments a SET priority = x.priority FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, priority int) WHERE a.id = x.id`,
      [json(rows)],
    );
  }
}
