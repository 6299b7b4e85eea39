import { MigrationInterface, QueryRunner } from 'typeorm';

/** Message prefix of the guard's refusal; the error filter answers it 403 `person_out_of_reach` (src/common/person-authority.ts). */
const PERSON_OUT_OF_REACH = 'person_out_of_reach';

/**
 * Acting on a person needs authority over all of that person (docs/security.md, "Acting on a
 * person"). The rule lives here, in SQL, once; the service (PersonAuthorityService) asks it before
 * a change so the caller gets a clear answer, and triggers ask it again on every statement that
 * changes a person, so a path that forgets to ask fails closed.
 *
 * - app_person_holding(person, org, partner): what a person holds in one tenant: the role's
 *   permissions, the organizations (partner tenant: null for all) and sites (null for all) of their
 *   membership there. A suspended membership still holds its role (re-activation gives it back).
 * - app_actor_authority(person, org, partner): what a person may exercise there now: their live
 *   grants (an active account, an unsuspended membership); in an organization both their own
 *   membership and a technician's reach into it.
 * - app_may_act_on(actor, target, org, partner): some grant of the actor covers the target's
 *   holding: every permission, every organization, every site. A target holding nothing there is
 *   covered.
 * - app_may_act_on_identity(actor, target): the global identity (email, name, password, MFA,
 *   account status): the person themself, or an actor covering the target in every tenant the
 *   target belongs to.
 * - app_may_change_email(actor, target, email): as the identity rule, and the account is owned by
 *   one organization (its only membership, its current address on a DNS-verified domain of that
 *   organization) and the new address is on a verified domain of it too.
 *
 * The functions read across tenants (the target's memberships elsewhere must count), so they run
 * with `app.scope = system` for their own duration (the SET clause; restored on return) and answer
 * only a boolean or the rows of the two people named. The actor is `app.actor_id`, set for every
 * request from the person its credential acts for and kept through system context.
 *
 * Suspensions also record the SCIM connection that made them: only that connection lifts one.
 * SCIM keeps its own userName and name parts per connection, apart from the account's sign-in email.
 */
export class ActingOnAPerson1763701900000 implements MigrationInterface {
  name = 'ActingOnAPerson1763701900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION app_actor_id() RETURNS uuid LANGUAGE sql STABLE AS
        $f$ SELECT nullif(current_setting('app.actor_id', true), '')::uuid $f$;

      -- notCovered() of permission-set.util.ts: '*' covers all; a wildcard is covered only by an equal or wider one.
      CREATE FUNCTION app_perm_covers(p_held text[], p_wanted text[]) RETURNS boolean LANGUAGE sql IMMUTABLE AS $f$
        SELECT '*' = ANY (p_held) OR NOT EXISTS (
          SELECT 1 FROM unnest(p_wanted) w
           WHERE w = '*' OR NOT (w = ANY (p_held) OR split_part(w, ':', 1) || ':*' = ANY (p_held)))
      $f$;

      CREATE FUNCTION app_reach_covers(a_perms text[], a_orgs uuid[], a_sites uuid[], t_perms text[], t_orgs uuid[], t_sites uuid[])
      RETURNS boolean LANGUAGE sql IMMUTABLE AS $f$
        SELECT app_perm_covers(a_perms, t_perms)
           AND (a_orgs IS NULL OR (t_orgs IS NOT NULL AND t_orgs <@ a_orgs))
           AND (a_sites IS NULL OR (t_sites IS NOT NULL AND t_sites <@ a_sites))
      $f$;

      -- A person's memberships in one tenant as reaches; p_live: only live grants of an active account, with a technician's reach into an organization.
      CREATE FUNCTION app_person_reach(p_user uuid, p_org uuid, p_partner uuid, p_live boolean)
      RETURNS TABLE (permissions text[], org_ids uuid[], site_ids uuid[])
      LANGUAGE sql STABLE SET app.scope = 'system' AS $f$
        SELECT r.permissions, ARRAY[m.org_id],
               CASE WHEN m.site_restricted THEN coalesce((SELECT array_agg(s.site_id) FROM organization_membership_sites s
                                                          WHERE s.org_id = m.org_id AND s.user_id = m.user_id), '{}') END
          FROM organization_memberships m JOIN roles r ON r.id = m.role_id JOIN users u ON u.id = m.user_id
         WHERE p_org IS NOT NULL AND m.org_id = p_org AND m.user_id = p_user
           AND (NOT p_live OR (m.suspended_at IS NULL AND u.status = 'active'))
        UNION ALL
        -- A technician's membership: in the partner its own reach; within an organization it reaches, that organization.
        SELECT r.permissions,
               CASE WHEN p_org IS NOT NULL THEN ARRAY[p_org]
                    WHEN pm.org_access = 'all' THEN NULL
                    ELSE coalesce((SELECT array_agg(po.org_id) FROM partner_membership_orgs po WHERE po.partner_id = pm.partner_id AND po.user_id = pm.user_id), '{}') END,
               CASE WHEN pm.site_restricted THEN coalesce((SELECT array_agg(ps.site_id) FROM partner_membership_sites ps
                                                           WHERE ps.partner_id = pm.partner_id AND ps.user_id = pm.user_id), '{}') END
          FROM partner_memberships pm JOIN roles r ON r.id = pm.role_id JOIN users u ON u.id = pm.user_id
         WHERE pm.user_id = p_user
           AND (NOT p_live OR (pm.suspended_at IS NULL AND u.status = 'active'))
           AND CASE WHEN p_org IS NULL THEN pm.partner_id = p_partner
                    ELSE p_live AND EXISTS (SELECT 1 FROM organizations o WHERE o.id = p_org AND o.partner_id = pm.partner_id)
                         AND (pm.org_access = 'all' OR EXISTS (SELECT 1 FROM partner_membership_orgs po
                                                               WHERE po.partner_id = pm.partner_id AND po.user_id = pm.user_id AND po.org_id = p_org)) END
      $f$;

      -- What a person holds in one tenant; a suspended membership still holds its role.
      CREATE FUNCTION app_person_holding(p_user uuid, p_org uuid, p_partner uuid)
      RETURNS TABLE (permissions text[], org_ids uuid[], site_ids uuid[])
      LANGUAGE sql STABLE AS $f$ SELECT * FROM app_person_reach(p_user, p_org, p_partner, false) $f$;

      -- What a person may exercise in one tenant now.
      CREATE FUNCTION app_actor_authority(p_user uuid, p_org uuid, p_partner uuid)
      RETURNS TABLE (permissions text[], org_ids uuid[], site_ids uuid[])
      LANGUAGE sql STABLE AS $f$ SELECT * FROM app_person_reach(p_user, p_org, p_partner, true) $f$;

      CREATE FUNCTION app_may_act_on(p_actor uuid, p_target uuid, p_org uuid, p_partner uuid) RETURNS boolean
      LANGUAGE sql STABLE SET app.scope = 'system' AS $f$
        SELECT p_actor IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM app_person_holding(p_target, p_org, p_partner) t
           WHERE NOT EXISTS (SELECT 1 FROM app_actor_authority(p_actor, p_org, p_partner) a
                              WHERE app_reach_covers(a.permissions, a.org_ids, a.site_ids, t.permissions, t.org_ids, t.site_ids)))
      $f$;

      -- May the actor hand out this much in the tenant (a role's permissions on these sites, null: every site)?
      CREATE FUNCTION app_may_grant(p_actor uuid, p_org uuid, p_partner uuid, p_perms text[], p_sites uuid[]) RETURNS boolean
      LANGUAGE sql STABLE SET app.scope = 'system' AS $f$
        SELECT EXISTS (SELECT 1 FROM app_actor_authority(p_actor, p_org, p_partner) a
                        WHERE app_reach_covers(a.permissions, NULL, a.site_ids, p_perms, NULL, p_sites))
      $f$;

      CREATE FUNCTION app_may_act_on_identity(p_actor uuid, p_target uuid) RETURNS boolean
      LANGUAGE sql STABLE SET app.scope = 'system' AS $f$
        SELECT p_actor IS NOT NULL AND (p_actor = p_target OR (
          (EXISTS (SELECT 1 FROM organization_memberships WHERE user_id = p_target) OR EXISTS (SELECT 1 FROM partner_memberships WHERE user_id = p_target))
          AND NOT EXISTS (SELECT 1 FROM organization_memberships m WHERE m.user_id = p_target AND NOT app_may_act_on(p_actor, p_target, m.org_id, NULL))
          AND NOT EXISTS (SELECT 1 FROM partner_memberships pm WHERE pm.user_id = p_target AND NOT app_may_act_on(p_actor, p_target, NULL, pm.partner_id))))
      $f$;

      -- The organization that owns an account: its only membership, its address on a verified domain of it.
      CREATE FUNCTION app_account_owner(p_user uuid) RETURNS uuid
      LANGUAGE sql STABLE SET app.scope = 'system' AS $f$
        SELECT m.org_id FROM organization_memberships m JOIN users u ON u.id = m.user_id
         WHERE m.user_id = p_user
           AND NOT EXISTS (SELECT 1 FROM partner_memberships pm WHERE pm.user_id = p_user)
           AND (SELECT count(*) FROM organization_memberships x WHERE x.user_id = p_user) = 1
           AND EXISTS (SELECT 1 FROM sso_verified_domains d WHERE d.org_id = m.org_id AND d.verified
                          AND d.domain = lower(split_part(u.email, '@', 2)))
      $f$;

      CREATE FUNCTION app_may_change_email(p_actor uuid, p_target uuid, p_email text) RETURNS boolean
      LANGUAGE sql STABLE SET app.scope = 'system' AS $f$
        SELECT p_actor IS NOT NULL AND (p_actor = p_target OR (
          app_may_act_on_identity(p_actor, p_target)
          AND EXISTS (SELECT 1 FROM sso_verified_domains d
                       WHERE d.org_id = app_account_owner(p_target) AND d.verified AND d.domain = lower(split_part(p_email, '@', 2)))))
      $f$;

      GRANT EXECUTE ON FUNCTION app_actor_id(), app_perm_covers(text[], text[]), app_reach_covers(text[], uuid[], uuid[], text[], uuid[], uuid[]),
        app_person_reach(uuid, uuid, uuid, boolean), app_person_holding(uuid, uuid, uuid), app_actor_authority(uuid, uuid, uuid), app_may_act_on(uuid, uuid, uuid, uuid),
        app_may_grant(uuid, uuid, uuid, text[], uuid[]), app_may_act_on_identity(uuid, uuid), app_account_owner(uuid),
        app_may_change_email(uuid, uuid, text) TO app_user;

      -- The backstop: every statement that changes a person asks the rule for the request's actor.
      -- Without an actor (sign-in, jobs, maintenance) the services' own checks stand alone; like
      -- row-level security, the rule binds the request role, not a superuser's maintenance.
      CREATE FUNCTION app_guard_person_change() RETURNS trigger LANGUAGE plpgsql AS $f$
      DECLARE
        v_actor uuid := app_actor_id();
        v_ok boolean := true;
        v_perms text[];
      BEGIN
        IF v_actor IS NULL OR current_setting('is_superuser') = 'on' OR pg_trigger_depth() > 1 THEN
          RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
        END IF;
        IF TG_TABLE_NAME = 'users' THEN
          IF NEW.email IS DISTINCT FROM OLD.email THEN
            v_ok := app_may_change_email(v_actor, OLD.id, NEW.email);
          ELSIF (NEW.name, NEW.password_hash, NEW.totp_secret, NEW.status) IS DISTINCT FROM (OLD.name, OLD.password_hash, OLD.totp_secret, OLD.status) THEN
            v_ok := app_may_act_on_identity(v_actor, OLD.id);
          END IF;
        ELSIF TG_TABLE_NAME = 'organization_memberships' THEN
          IF TG_OP = 'DELETE' OR (NEW.role_id, NEW.site_restricted, NEW.suspended_at) IS DISTINCT FROM (OLD.role_id, OLD.site_restricted, OLD.suspended_at) THEN
            v_ok := app_may_act_on(v_actor, OLD.user_id, OLD.org_id, NULL);
          END IF;
          IF v_ok AND TG_OP = 'UPDATE' AND (NEW.role_id, NEW.site_restricted) IS DISTINCT FROM (OLD.role_id, OLD.site_restricted) THEN
            SELECT permissions INTO v_perms FROM roles WHERE id = NEW.role_id;
            v_ok := app_may_grant(v_actor, NEW.org_id, NULL, v_perms, CASE WHEN NEW.site_restricted THEN '{}'::uuid[] END);
          END IF;
        ELSIF TG_TABLE_NAME = 'partner_memberships' THEN
          IF TG_OP = 'DELETE' OR (NEW.role_id, NEW.org_access, NEW.site_restricted, NEW.suspended_at) IS DISTINCT FROM (OLD.role_id, OLD.org_access, OLD.site_restricted, OLD.suspended_at) THEN
            v_ok := app_may_act_on(v_actor, OLD.user_id, NULL, OLD.partner_id);
          END IF;
          IF v_ok AND TG_OP = 'UPDATE' AND (NEW.role_id, NEW.org_access, NEW.site_restricted) IS DISTINCT FROM (OLD.role_id, OLD.org_access, OLD.site_restricted) THEN
            SELECT permissions INTO v_perms FROM roles WHERE id = NEW.role_id;
            v_ok := app_may_grant(v_actor, NULL, NEW.partner_id, v_perms, CASE WHEN NEW.site_restricted THEN '{}'::uuid[] END)
                    AND (NEW.org_access = 'selected' OR EXISTS (SELECT 1 FROM app_actor_authority(v_actor, NULL, NEW.partner_id) a WHERE a.org_ids IS NULL));
          END IF;
        ELSIF TG_TABLE_NAME = 'organization_membership_sites' THEN
          IF TG_OP = 'DELETE' THEN
            v_ok := app_may_act_on(v_actor, OLD.user_id, OLD.org_id, NULL);
          ELSIF NEW.user_id <> v_actor THEN
            v_ok := app_may_act_on(v_actor, NEW.user_id, NEW.org_id, NULL) AND app_may_grant(v_actor, NEW.org_id, NULL, '{}', ARRAY[NEW.site_id]);
          END IF;
        ELSIF TG_TABLE_NAME = 'partner_membership_sites' THEN
          IF TG_OP = 'DELETE' THEN
            v_ok := app_may_act_on(v_actor, OLD.user_id, NULL, OLD.partner_id);
          ELSIF NEW.user_id <> v_actor THEN
            v_ok := app_may_act_on(v_actor, NEW.user_id, NULL, NEW.partner_id) AND app_may_grant(v_actor, NULL, NEW.partner_id, '{}', ARRAY[NEW.site_id]);
          END IF;
        ELSIF TG_TABLE_NAME = 'partner_membership_orgs' THEN
          IF TG_OP = 'DELETE' THEN
            v_ok := app_may_act_on(v_actor, OLD.user_id, NULL, OLD.partner_id);
          ELSIF NEW.user_id <> v_actor THEN
            v_ok := app_may_act_on(v_actor, NEW.user_id, NULL, NEW.partner_id)
                    AND EXISTS (SELECT 1 FROM app_actor_authority(v_actor, NULL, NEW.partner_id) a WHERE a.org_ids IS NULL OR NEW.org_id = ANY (a.org_ids));
          END IF;
        ELSIF TG_TABLE_NAME = 'api_keys' THEN
          -- Revoking a key someone else created acts on that person's credentials.
          IF NEW.revoked_at IS NOT NULL AND OLD.revoked_at IS NULL AND OLD.created_by IS NOT NULL AND OLD.created_by <> v_actor THEN
            v_ok := app_may_act_on(v_actor, OLD.created_by, OLD.org_id, CASE WHEN OLD.org_id IS NULL THEN OLD.partner_id END);
          END IF;
        END IF;
        IF NOT coalesce(v_ok, false) THEN
          RAISE EXCEPTION '${PERSON_OUT_OF_REACH}: % on % needs authority over everything the person holds', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
      END $f$;

      CREATE TRIGGER person_change_guard BEFORE UPDATE ON users FOR EACH ROW EXECUTE FUNCTION app_guard_person_change();
      CREATE TRIGGER person_change_guard BEFORE UPDATE OR DELETE ON organization_memberships FOR EACH ROW EXECUTE FUNCTION app_guard_person_change();
      CREATE TRIGGER person_change_guard BEFORE UPDATE OR DELETE ON partner_memberships FOR EACH ROW EXECUTE FUNCTION app_guard_person_change();
      CREATE TRIGGER person_change_guard BEFORE INSERT OR DELETE ON organization_membership_sites FOR EACH ROW EXECUTE FUNCTION app_guard_person_change();
      CREATE TRIGGER person_change_guard BEFORE INSERT OR DELETE ON partner_membership_sites FOR EACH ROW EXECUTE FUNCTION app_guard_person_change();
      CREATE TRIGGER person_change_guard BEFORE INSERT OR DELETE ON partner_membership_orgs FOR EACH ROW EXECUTE FUNCTION app_guard_person_change();
      CREATE TRIGGER person_change_guard BEFORE UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION app_guard_person_change();

      ALTER TABLE organization_memberships ADD COLUMN suspended_by_connection_id uuid;
      ALTER TABLE partner_memberships ADD COLUMN suspended_by_connection_id uuid;

      ALTER TABLE scim_users
        ADD COLUMN user_name varchar(255),
        ADD COLUMN display_name varchar(255),
        ADD COLUMN given_name varchar(255),
        ADD COLUMN family_name varchar(255),
        -- Compared as a column, not as lower(user_name): under row-level security a call of a function
        -- that is not leakproof on a column cannot use an index, and an IdP's sync looks up every user.
        ADD COLUMN user_name_lower text GENERATED ALWAYS AS (lower(user_name)) STORED;
      CREATE UNIQUE INDEX scim_users_user_name_idx ON scim_users (connection_id, user_name_lower) WHERE user_name IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX scim_users_user_name_idx;
      ALTER TABLE scim_users DROP COLUMN user_name_lower, DROP COLUMN user_name, DROP COLUMN display_name, DROP COLUMN given_name, DROP COLUMN family_name;
      ALTER TABLE partner_memberships DROP COLUMN suspended_by_connection_id;
      ALTER TABLE organization_memberships DROP COLUMN suspended_by_connection_id;
      DROP TRIGGER person_change_guard ON api_keys;
      DROP TRIGGER person_change_guard ON partner_membership_orgs;
      DROP TRIGGER person_change_guard ON partner_membership_sites;
      DROP TRIGGER person_change_guard ON organization_membership_sites;
      DROP TRIGGER person_change_guard ON partner_memberships;
      DROP TRIGGER person_change_guard ON organization_memberships;
      DROP TRIGGER person_change_guard ON users;
      DROP FUNCTION app_guard_person_change();
      DROP FUNCTION app_may_change_email(uuid, uuid, text);
      DROP FUNCTION app_account_owner(uuid);
      DROP FUNCTION app_may_act_on_identity(uuid, uuid);
      DROP FUNCTION app_may_grant(uuid, uuid, uuid, text[], uuid[]);
      DROP FUNCTION app_may_act_on(uuid, uuid, uuid, uuid);
      DROP FUNCTION app_actor_authority(uuid, uuid, uuid);
      DROP FUNCTION app_person_holding(uuid, uuid, uuid);
      DROP FUNCTION app_person_reach(uuid, uuid, uuid, boolean);
      DROP FUNCTION app_reach_covers(text[], uuid[], uuid[], text[], uuid[], uuid[]);
      DROP FUNCTION app_perm_covers(text[], text[]);
      DROP FUNCTION app_actor_id();
    `);
  }
}
