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

export interface RequestRoleTimeouts {
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/**
 * Sets the request role's statement_timeout and idle_in_transaction_session_timeout as its
 * defaults in this database (`ALTER ROLE CURRENT_USER IN DATABASE … SET`, which a role may do for
 * itself), so the server applies them to every session it opens, whoever pools the connections:
 * startup parameters would be refused by PgBouncer, and a session SET would reach only the server
 * connections that happened to run it. Written only when they differ from what is stored, so
 * instances starting together mostly just read; the last instance to start with other values
 * wins, for sessions opened after it. Runs before the pool opens its first connection.
 */
export async function applyRequestRoleTimeouts(appUrl: string, t: RequestRoleTimeouts): Promise<void> {
  const wanted = [`statement_timeout=${t.statementTimeoutMs}`, `idle_in_transaction_session_timeout=${t.idleInTransactionTimeoutMs}`];
  const client = new Client({ connectionString: appUrl, application_name: 'rmm-identity' });
  await client.connect();
  try {
    const { rows } = await client.query<{ setconfig: string[] | null }>(
      `SELECT s.setconfig FROM pg_db_role_setting s
        WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND s.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user)`,
    );
    const stored = new Set(rows[0]?.setconfig ?? []);
    if (wanted.every((w) => stored.has(w))) return;
    const db = client.escapeIdentifier((await client.query<{ db: string }>('SELECT current_database() AS db')).rows[0].db);
    await alterRoleWithRetry(client, `ALTER ROLE CURRENT_USER IN DATABASE ${db} SET statement_timeout = ${Math.trunc(t.statementTimeoutMs)}`);
    await alterRoleWithRetry(client, `ALTER ROLE CURRENT_USER IN DATABASE ${db} SET idle_in_transaction_session_timeout = ${Math.trunc(t.idleInTransactionTimeoutMs)}`);
  } finally {
    await client.end();
  }
}
