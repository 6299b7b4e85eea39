import { Client } from 'pg';

export const APP_ROLE = 'app_user';

/**
 * When DATABASE_APP_URL is not given, the service derives the request-role connection from the
 * owner URL: same host and database, user app_user, and the owner's password (so concurrent
 * deployments sharing a cluster agree on it). The migration creates the role NOLOGIN; this
 * turns on LOGIN with that password. Idempotent.
 */
export async function ensureAppRoleLogin(ownerUrl: string): Promise<string> {
  const owner = new URL(ownerUrl);
  const password = decodeURIComponent(owner.password || '') || 'app_user';
  const client = new Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ canlogin: boolean }>(`SELECT rolcanlogin AS canlogin FROM pg_roles WHERE rolname = $1`, [APP_ROLE]);
    const literal = await client.query<{ q: string }>('SELECT quote_literal($1) AS q', [password]);
    if (!rows.length) throw new Error(`Role ${APP_ROLE} does not exist: run the migrations first`);
    await client.query(`ALTER ROLE ${APP_ROLE} LOGIN PASSWORD ${literal.rows[0].q}`);
  } finally {
    await client.end();
  }
  const app = new URL(ownerUrl);
  app.username = APP_ROLE;
  app.password = encodeURIComponent(password);
  return app.toString();
}

/** Refuses to serve through a role that would bypass row-level security. */
export async function assertRequestRoleIsRestricted(query: (sql: string) => Promise<{ rolsuper: boolean; rolbypassrls: boolean; rolname: string }[]>): Promise<void> {
  const [role] = await query(`SELECT rolname, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user`);
  if (!role) throw new Error('Cannot read the request role from pg_roles');
  if (role.rolsuper || role.rolbypassrls) {
    throw new Error(
      `Refusing to start: the request database role "${role.rolname}" is ${role.rolsuper ? 'a superuser' : 'allowed to bypass row-level security'}. ` +
        `Connect requests through a role created NOSUPERUSER NOBYPASSRLS (set DATABASE_APP_URL, or leave it unset to use ${APP_ROLE}).`,
    );
  }
}
