import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenancy content (spec 1.6 and 2.10, docs/requirements.md): contacts, custom fields, scripts,
 * configuration and patch policies with their assignments, and dynamic device groups.
 *
 * Partner-wide rows (custom fields, scripts, policies owned by the partner) apply to every
 * organization of the partner, so organization sessions may read them; only partner sessions
 * may write them. Dynamic group membership is recomputed by triggers, so a device or a
 * custom-field value changed by any module keeps the groups right in the same transaction.
 */
export class TenancyContent1763700400000 implements MigrationInterface {
  name = 'TenancyContent1763700400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- Partner-owned content is readable by the partner and by sessions of any of its organizations.
      CREATE FUNCTION app_partner_content_visible(p_partner uuid) RETURNS boolean LANGUAGE sql STABLE AS
        $f$ SELECT app_has_partner_access(p_partner)
                OR EXISTS (SELECT 1 FROM organizations o WHERE o.partner_id = p_partner AND app_has_org_access(o.id)) $f$;

      CREATE TABLE contacts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        site_id uuid,
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        email varchar(255),
        phones jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(phones) = 'array'),
        title varchar(255),
        notes text CHECK (length(notes) <= 10000),
        external_id varchar(255) CHECK (length(external_id) >= 1),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (org_id, id),
        FOREIGN KEY (org_id, site_id) REFERENCES sites(org_id, id) ON DELETE SET NULL (site_id)
      );
      CREATE UNIQUE INDEX contacts_org_external_idx ON contacts (org_id, external_id) WHERE external_id IS NOT NULL;
      CREATE INDEX contacts_org_site_idx ON contacts (org_id, site_id);
      CREATE INDEX contacts_org_email_idx ON contacts (org_id, lower(email));
      CREATE INDEX contacts_org_name_idx ON contacts (org_id, lower(name), id);

      CREATE TABLE custom_field_definitions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        key varchar(64) NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]{0,63}$'),
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        description varchar(1000),
        type varchar(16) NOT NULL CHECK (type IN ('text', 'number', 'boolean', 'date', 'single_select', 'multi_select')),
        options jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(options) = 'array'),
        validation jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(validation) = 'object'),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((partner_id IS NULL) <> (org_id IS NULL)),
        CHECK ((type IN ('single_select', 'multi_select')) = (jsonb_array_length(options) > 0)),
        UNIQUE (org_id, id),
        UNIQUE (partner_id, id)
      );
      CREATE UNIQUE INDEX custom_field_definitions_partner_key_idx ON custom_field_definitions (partner_id, key) WHERE partner_id IS NOT NULL;
      CREATE UNIQUE INDEX custom_field_definitions_org_key_idx ON custom_field_definitions (org_id, key) WHERE org_id IS NOT NULL;

      -- Values live on devices. The definition may be partner-wide, so its foreign key is on id;
      -- the statement trigger below checks it applies to the device's organization.
      CREATE TABLE custom_field_values (
        org_id uuid NOT NULL,
        device_id uuid NOT NULL,
        definition_id uuid NOT NULL REFERENCES custom_field_definitions(id) ON DELETE CASCADE,
        value jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (org_id, device_id, definition_id),
        FOREIGN KEY (org_id, device_id) REFERENCES devices(org_id, id) ON DELETE CASCADE
      );
      CREATE INDEX custom_field_values_org_definition_idx ON custom_field_values (org_id, definition_id);

      CREATE TABLE scripts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        description varchar(2000),
        category varchar(100) NOT NULL CHECK (length(category) >= 1),
        language varchar(16) NOT NULL CHECK (language IN ('powershell', 'cmd', 'bash', 'sh', 'zsh', 'python')),
        body text NOT NULL CHECK (length(body) BETWEEN 1 AND 262144),
        parameters jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(parameters) = 'array'),
        run_as varchar(8) NOT NULL CHECK (run_as IN ('system', 'user')),
        timeout_seconds integer NOT NULL DEFAULT 300 CHECK (timeout_seconds BETWEEN 1 AND 86400),
        exit_code_severity_mapping jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(exit_code_severity_mapping) = 'array'),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((partner_id IS NULL) <> (org_id IS NULL)),
        UNIQUE (org_id, id),
        UNIQUE (partner_id, id)
      );
      CREATE UNIQUE INDEX scripts_partner_name_idx ON scripts (partner_id, lower(name)) WHERE partner_id IS NOT NULL;
      CREATE UNIQUE INDEX scripts_org_name_idx ON scripts (org_id, lower(name)) WHERE org_id IS NOT NULL;

      CREATE TABLE policies (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        partner_id uuid REFERENCES partners(id) ON DELETE CASCADE,
        org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        type varchar(16) NOT NULL CHECK (type IN ('configuration', 'patch')),
        name varchar(255) NOT NULL CHECK (length(name) >= 1),
        description varchar(2000),
        enabled boolean NOT NULL DEFAULT true,
        features jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(features) = 'object'),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((partner_id IS NULL) <> (org_id IS NULL)),
        UNIQUE (org_id, id),
        UNIQUE (partner_id, id)
      );
      CREATE UNIQUE INDEX policies_partner_name_idx ON policies (partner_id, type, lower(name)) WHERE partner_id IS NOT NULL;
      CREATE UNIQUE INDEX policies_org_name_idx ON policies (org_id, type, lower(name)) WHERE org_id IS NOT NULL;

      -- One row per (policy, target). partner_id is always the partner of the target, org_id the
      -- target's organization (NULL for a partner-level target); the (partner_id, org_id) key
      -- proves the organization belongs to that partner.
      CREATE TABLE policy_assignments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        partner_id uuid NOT NULL REFERENCES partners(id) ON DELETE CASCADE,
        org_id uuid,
        policy_id uuid NOT NULL REFERENCES policies(id) ON DELETE CASCADE,
        target_level varchar(16) NOT NULL CHECK (target_level IN ('partner', 'organization', 'site', 'device_group', 'device')),
        site_id uuid,
        device_group_id uuid,
        device_id uuid,
        priority integer NOT NULL DEFAULT 100 CHECK (priority BETWEEN 0 AND 10000),
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((target_level = 'partner') = (org_id IS NULL)),
        CHECK ((target_level = 'site') = (site_id IS NOT NULL)),
        CHECK ((target_level = 'device_group') = (device_group_id IS NOT NULL)),
        CHECK ((target_level = 'device') = (device_id IS NOT NULL)),
        FOREIGN KEY (partner_id, org_id) REFERENCES organizations(partner_id, id) ON DELETE CASCADE,
        FOREIGN KEY (org_id, site_id) REFERENCES sites(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (org_id, device_group_id) REFERENCES device_groups(org_id, id) ON DELETE CASCADE,
        FOREIGN KEY (org_id, device_id) REFERENCES devices(org_id, id) ON DELETE CASCADE
      );
      CREATE UNIQUE INDEX policy_assignments_target_idx ON policy_assignments
        (partner_id, policy_id, target_level, coalesce(site_id, device_group_id, device_id, org_id, partner_id));
      CREATE INDEX policy_assignments_org_idx ON policy_assignments (org_id, target_level);
      CREATE INDEX policy_assignments_policy_idx ON policy_assignments (policy_id);

      ALTER TABLE device_groups
        ADD COLUMN kind varchar(16) NOT NULL DEFAULT 'static' CHECK (kind IN ('static', 'dynamic')),
        ADD COLUMN filter jsonb,
        ADD CONSTRAINT device_groups_dynamic_filter CHECK ((kind = 'dynamic') = (filter IS NOT NULL));
      CREATE INDEX device_groups_org_dynamic_idx ON device_groups (org_id) WHERE kind = 'dynamic';
    `);

    await q.query(String.raw`
      CREATE FUNCTION dynamic_group_like(p text) RETURNS text LANGUAGE sql IMMUTABLE AS
        $f$ SELECT replace(replace(replace(p, '\', '\\'), '%', '\%'), '_', '\_') $f$;

      -- Condition on a text column of the device (hostname, os_type, site_id::text, status).
      -- Comparisons are case-insensitive; every literal goes through format(%L).
      CREATE FUNCTION dynamic_group_text_condition(lhs text, op text, v jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $f$
      DECLARE
        s text := v #>> '{}';
        list text[];
      BEGIN
        IF op IN ('in', 'notIn') THEN
          SELECT coalesce(array_agg(lower(x)), '{}') INTO list FROM jsonb_array_elements_text(v) x;
        END IF;
        RETURN CASE op
          WHEN 'eq' THEN format('(lower(%s) = lower(%L))', lhs, s)
          WHEN 'neq' THEN format('(lower(%s) IS DISTINCT FROM lower(%L))', lhs, s)
          WHEN 'in' THEN format('(lower(%s) = ANY (%L::text[]))', lhs, list)
          WHEN 'notIn' THEN format('(NOT coalesce(lower(%s) = ANY (%L::text[]), false))', lhs, list)
          WHEN 'startsWith' THEN format('(%s ILIKE %L)', lhs, dynamic_group_like(s) || '%')
          WHEN 'endsWith' THEN format('(%s ILIKE %L)', lhs, '%' || dynamic_group_like(s))
          WHEN 'contains' THEN format('(%s ILIKE %L)', lhs, '%' || dynamic_group_like(s) || '%')
          WHEN 'exists' THEN format('(%s IS NOT NULL)', lhs)
          WHEN 'notExists' THEN format('(%s IS NULL)', lhs)
        END;
      END $f$;

      -- Condition on v.value (jsonb) of one custom-field value row. Multi-select values are arrays:
      -- eq, in and contains test membership of an option.
      CREATE FUNCTION dynamic_group_value_condition(op text, v jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $f$
      DECLARE
        s text := v #>> '{}';
        parts text[] := '{}';
        x jsonb;
        cmp text;
      BEGIN
        IF op = 'eq' THEN
          RETURN format($c$(v.value = %1$L::jsonb OR v.value @> jsonb_build_array(%1$L::jsonb)
            OR (jsonb_typeof(v.value) = 'string' AND jsonb_typeof(%1$L::jsonb) = 'string' AND lower(v.value #>> '{}') = lower(%2$L)))$c$, v::text, s);
        ELSIF op = 'in' THEN
          FOR x IN SELECT value FROM jsonb_array_elements(v) LOOP
            parts := parts || dynamic_group_value_condition('eq', x);
          END LOOP;
          RETURN CASE WHEN cardinality(parts) = 0 THEN 'false' ELSE '(' || array_to_string(parts, ' OR ') || ')' END;
        ELSIF op IN ('startsWith', 'endsWith', 'contains') THEN
          RETURN format($c$(CASE WHEN jsonb_typeof(v.value) = 'array' THEN %1$s ELSE (v.value #>> '{}') ILIKE %2$L END)$c$,
            CASE WHEN op = 'contains' THEN format('v.value @> jsonb_build_array(%L::jsonb)', v::text) ELSE 'false' END,
            CASE op WHEN 'startsWith' THEN dynamic_group_like(s) || '%'
                    WHEN 'endsWith' THEN '%' || dynamic_group_like(s)
                    ELSE '%' || dynamic_group_like(s) || '%' END);
        ELSIF op IN ('gt', 'gte', 'lt', 'lte') THEN
          cmp := CASE op WHEN 'gt' THEN '>' WHEN 'gte' THEN '>=' WHEN 'lt' THEN '<' ELSE '<=' END;
          IF jsonb_typeof(v) = 'number' THEN
            RETURN format($c$(CASE WHEN jsonb_typeof(v.value) = 'number' THEN (v.value)::numeric %s %L::numeric ELSE false END)$c$, cmp, s);
          END IF;
          RETURN format($c$(CASE WHEN jsonb_typeof(v.value) = 'string' THEN (v.value #>> '{}') %s %L ELSE false END)$c$, cmp, s);
        END IF;
        RAISE EXCEPTION 'invalid device filter operator %', op USING ERRCODE = 'check_violation';
      END $f$;

      -- Compiles a device filter (validated by the API) into a predicate over devices d.
      CREATE FUNCTION dynamic_group_predicate(f jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $f$
      DECLARE
        parts text[] := '{}';
        c jsonb;
        op text := f->>'op';
        lhs text;
        exists_value text;
      BEGIN
        IF jsonb_typeof(f) IS DISTINCT FROM 'object' THEN
          RAISE EXCEPTION 'invalid device filter' USING ERRCODE = 'check_violation';
        END IF;
        IF f ? 'all' OR f ? 'any' THEN
          FOR c IN SELECT value FROM jsonb_array_elements(CASE WHEN f ? 'all' THEN f->'all' ELSE f->'any' END) LOOP
            parts := parts || dynamic_group_predicate(c);
          END LOOP;
          IF cardinality(parts) = 0 THEN RETURN CASE WHEN f ? 'all' THEN 'true' ELSE 'false' END; END IF;
          RETURN '(' || array_to_string(parts, CASE WHEN f ? 'all' THEN ' AND ' ELSE ' OR ' END) || ')';
        END IF;
        IF f ? 'not' THEN
          RETURN '(NOT ' || dynamic_group_predicate(f->'not') || ')';
        END IF;
        IF f ? 'field' THEN
          lhs := CASE f->>'field' WHEN 'hostname' THEN 'd.hostname' WHEN 'osType' THEN 'd.os_type'
                                   WHEN 'siteId' THEN 'd.site_id::text' WHEN 'status' THEN 'd.status' END;
          IF lhs IS NULL OR dynamic_group_text_condition(lhs, op, f->'value') IS NULL THEN
            RAISE EXCEPTION 'invalid device filter condition' USING ERRCODE = 'check_violation';
          END IF;
          RETURN dynamic_group_text_condition(lhs, op, f->'value');
        END IF;
        IF f ? 'customField' THEN
          exists_value := format('EXISTS (SELECT 1 FROM custom_field_values v WHERE v.org_id = d.org_id AND v.device_id = d.id AND v.definition_id = %L::uuid',
                                 f->>'customField');
          RETURN CASE op
            WHEN 'exists' THEN '(' || exists_value || '))'
            WHEN 'notExists' THEN '(NOT ' || exists_value || '))'
            WHEN 'neq' THEN '(NOT ' || exists_value || ' AND ' || dynamic_group_value_condition('eq', f->'value') || '))'
            WHEN 'notIn' THEN '(NOT ' || exists_value || ' AND ' || dynamic_group_value_condition('in', f->'value') || '))'
            ELSE '(' || exists_value || ' AND ' || dynamic_group_value_condition(op, f->'value') || '))'
          END;
        END IF;
        RAISE EXCEPTION 'invalid device filter' USING ERRCODE = 'check_violation';
      END $f$;

      -- Brings dynamic groups of one organization in line with their filters: every group, or one
      -- (p_group), for every device or only p_devices. Members of a site-bound group stay in its site.
      CREATE FUNCTION recompute_dynamic_groups(p_org uuid, p_devices uuid[], p_group uuid DEFAULT NULL) RETURNS void
      LANGUAGE plpgsql AS $f$
      DECLARE
        g record;
        pred text;
      BEGIN
        PERFORM set_config('app.dynamic_group_recompute', 'on', true);
        FOR g IN SELECT id, site_id, filter FROM device_groups
                  WHERE org_id = p_org AND kind = 'dynamic' AND (p_group IS NULL OR id = p_group) LOOP
          pred := dynamic_group_predicate(g.filter);
          EXECUTE format($q$DELETE FROM device_group_members m
                             WHERE m.org_id = $1 AND m.group_id = $2 AND ($3::uuid[] IS NULL OR m.device_id = ANY ($3))
                               AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.org_id = m.org_id AND d.id = m.device_id
                                                 AND ($4::uuid IS NULL OR d.site_id = $4) AND %s)$q$, pred)
            USING p_org, g.id, p_devices, g.site_id;
          EXECUTE format($q$INSERT INTO device_group_members (org_id, group_id, device_id)
                            SELECT d.org_id, $2, d.id FROM devices d
                             WHERE d.org_id = $1 AND ($3::uuid[] IS NULL OR d.id = ANY ($3))
                               AND ($4::uuid IS NULL OR d.site_id = $4) AND %s
                            ON CONFLICT DO NOTHING$q$, pred)
            USING p_org, g.id, p_devices, g.site_id;
        END LOOP;
        PERFORM set_config('app.dynamic_group_recompute', 'off', true);
      END $f$;

      -- Membership of a dynamic group is derived: only the recompute may add rows to it.
      CREATE FUNCTION device_group_members_guard() RETURNS trigger LANGUAGE plpgsql AS $f$
      BEGIN
        IF coalesce(current_setting('app.dynamic_group_recompute', true), '') <> 'on'
           AND EXISTS (SELECT 1 FROM device_groups g WHERE g.org_id = NEW.org_id AND g.id = NEW.group_id AND g.kind = 'dynamic') THEN
          RAISE EXCEPTION 'members of a dynamic device group follow its filter and cannot be added by hand'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'device_group_members_dynamic';
        END IF;
        RETURN NEW;
      END $f$;
      CREATE TRIGGER device_group_members_guard BEFORE INSERT ON device_group_members
        FOR EACH ROW EXECUTE FUNCTION device_group_members_guard();

      CREATE FUNCTION device_groups_after_filter_change() RETURNS trigger LANGUAGE plpgsql AS $f$
      BEGIN
        IF NEW.kind = 'dynamic' THEN
          PERFORM recompute_dynamic_groups(NEW.org_id, NULL, NEW.id);
        END IF;
        RETURN NULL;
      END $f$;
      CREATE TRIGGER device_groups_recompute_on_insert AFTER INSERT ON device_groups
        FOR EACH ROW WHEN (NEW.kind = 'dynamic') EXECUTE FUNCTION device_groups_after_filter_change();
      CREATE TRIGGER device_groups_recompute_on_update AFTER UPDATE ON device_groups
        FOR EACH ROW WHEN (NEW.kind = 'dynamic' AND (OLD.filter, OLD.site_id, OLD.kind) IS DISTINCT FROM (NEW.filter, NEW.site_id, NEW.kind))
        EXECUTE FUNCTION device_groups_after_filter_change();

      -- Statement-level, with transition tables: one recompute per organization per statement,
      -- limited to the devices the statement touched.
      CREATE FUNCTION devices_after_insert() RETURNS trigger LANGUAGE plpgsql AS $f$
      DECLARE r record;
      BEGIN
        FOR r IN SELECT n.org_id, array_agg(n.id) AS ids FROM new_devices n
                  WHERE EXISTS (SELECT 1 FROM device_groups g WHERE g.org_id = n.org_id AND g.kind = 'dynamic')
                  GROUP BY n.org_id LOOP
          PERFORM recompute_dynamic_groups(r.org_id, r.ids);
        END LOOP;
        RETURN NULL;
      END $f$;
      CREATE TRIGGER devices_dynamic_groups_insert AFTER INSERT ON devices
        REFERENCING NEW TABLE AS new_devices FOR EACH STATEMENT EXECUTE FUNCTION devices_after_insert();

      CREATE FUNCTION devices_after_update() RETURNS trigger LANGUAGE plpgsql AS $f$
      DECLARE r record;
      BEGIN
        FOR r IN SELECT n.org_id, array_agg(n.id) AS ids FROM new_devices n JOIN old_devices o ON o.id = n.id
                  WHERE (o.hostname, o.os_type, o.site_id, o.status) IS DISTINCT FROM (n.hostname, n.os_type, n.site_id, n.status)
                    AND EXISTS (SELECT 1 FROM device_groups g WHERE g.org_id = n.org_id AND g.kind = 'dynamic')
                  GROUP BY n.org_id LOOP
          PERFORM recompute_dynamic_groups(r.org_id, r.ids);
        END LOOP;
        RETURN NULL;
      END $f$;
      CREATE TRIGGER devices_dynamic_groups_update AFTER UPDATE ON devices
        REFERENCING OLD TABLE AS old_devices NEW TABLE AS new_devices FOR EACH STATEMENT EXECUTE FUNCTION devices_after_update();

      -- A value's definition must be partner-wide for the device's partner, or owned by its organization.
      CREATE FUNCTION custom_field_values_after_write() RETURNS trigger LANGUAGE plpgsql AS $f$
      DECLARE r record;
      BEGIN
        IF EXISTS (SELECT 1 FROM (SELECT DISTINCT org_id, definition_id FROM new_values) n
                    WHERE NOT EXISTS (SELECT 1 FROM custom_field_definitions d JOIN organizations o ON o.id = n.org_id
                                       WHERE d.id = n.definition_id AND (d.org_id = n.org_id OR d.partner_id = o.partner_id))) THEN
          RAISE EXCEPTION 'custom field definition does not apply to the device''s organization'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'custom_field_values_definition_owner';
        END IF;
        FOR r IN SELECT n.org_id, array_agg(DISTINCT n.device_id) AS ids FROM new_values n
                  WHERE EXISTS (SELECT 1 FROM device_groups g WHERE g.org_id = n.org_id AND g.kind = 'dynamic')
                  GROUP BY n.org_id LOOP
          PERFORM recompute_dynamic_groups(r.org_id, r.ids);
        END LOOP;
        RETURN NULL;
      END $f$;
      CREATE TRIGGER custom_field_values_insert AFTER INSERT ON custom_field_values
        REFERENCING NEW TABLE AS new_values FOR EACH STATEMENT EXECUTE FUNCTION custom_field_values_after_write();
      CREATE TRIGGER custom_field_values_update AFTER UPDATE ON custom_field_values
        REFERENCING NEW TABLE AS new_values FOR EACH STATEMENT EXECUTE FUNCTION custom_field_values_after_write();

      CREATE FUNCTION custom_field_values_after_delete() RETURNS trigger LANGUAGE plpgsql AS $f$
      DECLARE r record;
      BEGIN
        FOR r IN SELECT o.org_id, array_agg(DISTINCT o.device_id) AS ids FROM old_values o
                  WHERE EXISTS (SELECT 1 FROM device_groups g WHERE g.org_id = o.org_id AND g.kind = 'dynamic')
                  GROUP BY o.org_id LOOP
          PERFORM recompute_dynamic_groups(r.org_id, r.ids);
        END LOOP;
        RETURN NULL;
      END $f$;
      CREATE TRIGGER custom_field_values_delete AFTER DELETE ON custom_field_values
        REFERENCING OLD TABLE AS old_values FOR EACH STATEMENT EXECUTE FUNCTION custom_field_values_after_delete();
    `);

    await q.query(`
      ALTER TABLE contacts ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON contacts USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));

      ALTER TABLE custom_field_values ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY tenant ON custom_field_values USING (app_has_org_access(org_id)) WITH CHECK (app_has_org_access(org_id));

      ALTER TABLE custom_field_definitions ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY visible ON custom_field_definitions FOR SELECT
        USING (CASE WHEN org_id IS NOT NULL THEN app_has_org_access(org_id) ELSE app_partner_content_visible(partner_id) END);
      CREATE POLICY write_owner ON custom_field_definitions FOR INSERT WITH CHECK (app_has_owner_access(org_id, partner_id));
      CREATE POLICY update_owner ON custom_field_definitions FOR UPDATE
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));
      CREATE POLICY delete_owner ON custom_field_definitions FOR DELETE USING (app_has_owner_access(org_id, partner_id));

      ALTER TABLE scripts ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY visible ON scripts FOR SELECT
        USING (CASE WHEN org_id IS NOT NULL THEN app_has_org_access(org_id) ELSE app_partner_content_visible(partner_id) END);
      CREATE POLICY write_owner ON scripts FOR INSERT WITH CHECK (app_has_owner_access(org_id, partner_id));
      CREATE POLICY update_owner ON scripts FOR UPDATE
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));
      CREATE POLICY delete_owner ON scripts FOR DELETE USING (app_has_owner_access(org_id, partner_id));

      ALTER TABLE policies ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY visible ON policies FOR SELECT
        USING (CASE WHEN org_id IS NOT NULL THEN app_has_org_access(org_id) ELSE app_partner_content_visible(partner_id) END);
      CREATE POLICY write_owner ON policies FOR INSERT WITH CHECK (app_has_owner_access(org_id, partner_id));
      CREATE POLICY update_owner ON policies FOR UPDATE
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));
      CREATE POLICY delete_owner ON policies FOR DELETE USING (app_has_owner_access(org_id, partner_id));

      ALTER TABLE policy_assignments ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
      CREATE POLICY visible ON policy_assignments FOR SELECT
        USING (CASE WHEN org_id IS NOT NULL THEN app_has_org_access(org_id) ELSE app_partner_content_visible(partner_id) END);
      CREATE POLICY write_owner ON policy_assignments FOR INSERT WITH CHECK (app_has_owner_access(org_id, partner_id));
      CREATE POLICY update_owner ON policy_assignments FOR UPDATE
        USING (app_has_owner_access(org_id, partner_id)) WITH CHECK (app_has_owner_access(org_id, partner_id));
      CREATE POLICY delete_owner ON policy_assignments FOR DELETE USING (app_has_owner_access(org_id, partner_id));

      GRANT SELECT, INSERT, UPDATE, DELETE ON contacts, custom_field_definitions, custom_field_values, scripts, policies, policy_assignments TO app_user;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER IF EXISTS device_group_members_guard ON device_group_members;
      DROP TRIGGER IF EXISTS device_groups_recompute_on_insert ON device_groups;
      DROP TRIGGER IF EXISTS device_groups_recompute_on_update ON device_groups;
      DROP TRIGGER IF EXISTS devices_dynamic_groups_insert ON devices;
      DROP TRIGGER IF EXISTS devices_dynamic_groups_update ON devices;
      DROP TABLE IF EXISTS policy_assignments, policies, scripts, custom_field_values, custom_field_definitions, contacts;
      DROP FUNCTION IF EXISTS custom_field_values_after_write(), custom_field_values_after_delete(), devices_after_insert(),
        devices_after_update(), device_groups_after_filter_change(), device_group_members_guard(),
        recompute_dynamic_groups(uuid, uuid[], uuid), dynamic_group_predicate(jsonb), dynamic_group_value_condition(text, jsonb),
        dynamic_group_text_condition(text, text, jsonb), dynamic_group_like(text), app_partner_content_visible(uuid);
      DELETE FROM device_groups WHERE kind = 'dynamic';
      ALTER TABLE device_groups DROP CONSTRAINT device_groups_dynamic_filter, DROP COLUMN filter, DROP COLUMN kind;
    `);
  }
}
