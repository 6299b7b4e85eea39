import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every instance's cache of resolved callers learns of a change that affects a caller when the
 * change commits, whichever instance or job made it (docs/security.md, "Revocation across
 * instances"): the tables a principal is built from notify channel `principal_changes` with
 * `<kind>:<id>` — `u:<user>` (memberships and their sites and organizations, the account's status),
 * `s:<session>` (revoked or deleted), `k:<api key>` (revoked or deleted), `c:<SCIM connection>`
 * (token rotated, revoked, acting person changed), `a:<agent>` (revoked or deleted), `*:` (a role's
 * permissions changed: every caller holding it). PostgreSQL sends a notification at commit and drops
 * identical ones within a transaction. The cache's time-to-live stays as the bound when a
 * notification is lost (the listening connection was down; it then drops everything on reconnect).
 */
const TRIGGERS: { table: string; name: string; on: string; when?: string; kind: string; column: string }[] = [
  { table: 'organization_memberships', name: 'organization_memberships_principal_change', on: 'INSERT OR UPDATE OR DELETE', kind: 'u', column: 'user_id' },
  { table: 'partner_memberships', name: 'partner_memberships_principal_change', on: 'INSERT OR UPDATE OR DELETE', kind: 'u', column: 'user_id' },
  { table: 'organization_membership_sites', name: 'organization_membership_sites_principal_change', on: 'INSERT OR UPDATE OR DELETE', kind: 'u', column: 'user_id' },
  { table: 'partner_membership_sites', name: 'partner_membership_sites_principal_change', on: 'INSERT OR UPDATE OR DELETE', kind: 'u', column: 'user_id' },
  { table: 'partner_membership_orgs', name: 'partner_membership_orgs_principal_change', on: 'INSERT OR UPDATE OR DELETE', kind: 'u', column: 'user_id' },
  { table: 'users', name: 'users_status_principal_change', on: 'UPDATE OF status', when: 'OLD.status IS DISTINCT FROM NEW.status', kind: 'u', column: 'id' },
  { table: 'sessions', name: 'sessions_revoked_principal_change', on: 'UPDATE OF revoked_at', when: 'OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL', kind: 's', column: 'id' },
  { table: 'sessions', name: 'sessions_deleted_principal_change', on: 'DELETE', kind: 's', column: 'id' },
  { table: 'api_keys', name: 'api_keys_revoked_principal_change', on: 'UPDATE OF revoked_at', when: 'OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL', kind: 'k', column: 'id' },
  { table: 'api_keys', name: 'api_keys_deleted_principal_change', on: 'DELETE', kind: 'k', column: 'id' },
  {
    table: 'scim_connections',
    name: 'scim_connections_principal_change',
    on: 'UPDATE',
    when: '(OLD.token_hash, OLD.revoked_at, OLD.acting_user_id) IS DISTINCT FROM (NEW.token_hash, NEW.revoked_at, NEW.acting_user_id)',
    kind: 'c',
    column: 'id',
  },
  { table: 'scim_connections', name: 'scim_connections_deleted_principal_change', on: 'DELETE', kind: 'c', column: 'id' },
  { table: 'agents', name: 'agents_revoked_principal_change', on: 'UPDATE OF revoked_at', when: 'OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL', kind: 'a', column: 'id' },
  { table: 'agents', name: 'agents_deleted_principal_change', on: 'DELETE', kind: 'a', column: 'id' },
  { table: 'roles', name: 'roles_permissions_principal_change', on: 'UPDATE OF permissions', when: 'OLD.permissions IS DISTINCT FROM NEW.permissions', kind: '*', column: 'id' },
];

export class PrincipalChangeNotifications1763702400000 implements MigrationInterface {
  name = 'PrincipalChangeNotifications1763702400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- TG_ARGV: the kind, then the column naming whose caller changed.
      CREATE FUNCTION app_notify_principal_change() RETURNS trigger LANGUAGE plpgsql AS $f$
      DECLARE
        v_id text;
      BEGIN
        IF TG_OP = 'DELETE' THEN v_id := to_jsonb(OLD) ->> TG_ARGV[1]; ELSE v_id := to_jsonb(NEW) ->> TG_ARGV[1]; END IF;
        PERFORM pg_notify('principal_changes', TG_ARGV[0] || ':' || CASE WHEN TG_ARGV[0] = '*' THEN '' ELSE coalesce(v_id, '') END);
        RETURN NULL;
      END
      $f$;
      ${TRIGGERS.map(
        (t) =>
          `CREATE TRIGGER ${t.name} AFTER ${t.on} ON ${t.table} FOR EACH ROW${t.when ? ` WHEN (${t.when})` : ''} EXECUTE FUNCTION app_notify_principal_change('${t.kind}', '${t.column}');`,
      ).join('\n      ')}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ${TRIGGERS.map((t) => `DROP TRIGGER ${t.name} ON ${t.table};`).join('\n      ')}
      DROP FUNCTION app_notify_principal_change();
    `);
  }
}
