import { Client } from 'pg';

export const APP_ROLE = 'app_user';

/**
 * When DATABASE_APP_URL is not given (development and tests; production requires it), the
 * service derives the request-role connection from the owner URL: same host and database, user
 * app_user, and the given password, which must be unpredictable (developmentAppRolePassword).
 * The migration creates the role NOLOGIN; this turns on LOGIN with that password. The role is
 * shared by every database of the cluster, so concurrent callers must pass the same password:
 * setting it again to the same value leaves open pools working. Idempotent.
 */
export async function ensureAppRoleLogin(ownerUrl: string, password: string): Promise<string> {
  const owner = new URL(ownerUrl);
  if (!password || password === APP_ROLE || password === decodeURIComponent(owner.password)) {
    throw new Error(`Refusing to give ${APP_ROLE} an empty or predictable password (the role name or the owner's)`);
  }
  const client = new Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ canlogin: boolean }>(`SELECT rolcanlogin AS canlogin FROM pg_roles WHERE rolname = $1`, [APP_ROLE]);
    if (!rows.length) throw new Error(`Role ${APP_ROLE} does not exist: run the migrations first`);
    const literal = await client.query<{ q: string }>('SELECT quote_literal($1) AS q', [password]);
    await alterRoleWithRetry(client, `ALTER ROLE ${APP_ROLE} LOGIN PASSWORD ${literal.rows[0].q}`);
  } finally {
    await client.end();
  }
  const app = new URL(ownerUrl);
  app.username = APP_ROLE;
  app.password = encodeURIComponent(password);
  return app.toString();
}

/** Two processes altering the one cluster-wide role at the same moment make one fail with "tuple concurrently updated". */
async function alterRoleWithRetry(client: Client, sql: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(sql);
      return;
    } catch (e) {
      if (attempt >= 5 || !/tuple concurrently updated/.test((e as Error).message)) throw e;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
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
