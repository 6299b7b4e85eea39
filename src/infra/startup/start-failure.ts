/**
 * A start that fails ends with one block an operator can act on, in the shape of the configuration
 * error (`Invalid configuration:` and a line per problem): what failed, the setting or resource it
 * came from (a URL without its password), and what to do. The library's own text stays on a line of
 * its own, since it is what a search finds; the stack trace only with LOG_LEVEL=debug.
 */
export class StartFailure extends Error {
  constructor(
    /** What failed, as one sentence: `PostgreSQL refused the connection`. */
    readonly what: string,
    /** The block's lines after the first: `setting`, `cause`, `to do`…, in order. */
    readonly details: ReadonlyArray<readonly [label: string, text: string]>,
    override readonly cause?: unknown,
  ) {
    super([`Cannot start: ${what}`, ...details.map(([label, text]) => `  - ${label}: ${text}`)].join('\n'));
    this.name = 'StartFailure';
  }
}

/** A connection URL as it may be printed: user, host, port and database, never the password. */
export function printableUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    u.search = '';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** Host and port of a connection URL, for the first line. */
function address(url: string, defaultPort: number): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || defaultPort}`;
  } catch {
    return 'the configured address';
  }
}

/** Where a database connection's settings came from, so the block can name it. */
export interface DatabaseTarget {
  /** `DATABASE_URL`, `DATABASE_APP_URL`, or a phrase for a derived or embedded connection. */
  setting: string;
  url: string;
  /** What this connection is for, in a few words: `the owner role (migrations)`. */
  role: string;
}

const DOCTOR = 'npm run doctor checks every connection and setting without starting the service';

/**
 * The failure of a connection to PostgreSQL (or of a statement run while connecting), in words,
 * by the error's code: network errors from Node and SQLSTATE classes 28 (authentication) and 3D
 * (missing database) from the server. Anything else keeps the server's message.
 */
export function databaseFailure(err: unknown, target: DatabaseTarget): StartFailure {
  if (err instanceof StartFailure) return err;
  const e = err as { code?: string; message?: string } | undefined;
  const code = e?.code;
  const message = e?.message ?? String(err);
  const where = address(target.url, 5432);
  const setting: [string, string] = ['setting', `${target.setting} (${printableUrl(target.url)}), ${target.role}`];
  const cause: [string, string] = ['cause', message];
  if (code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || /timeout expired|Connection terminated due to connection timeout/i.test(message)) {
    return new StartFailure(`PostgreSQL at ${where} is unreachable`, [setting, cause, ['to do', `start PostgreSQL there, or correct the host and port in ${target.setting}; ${DOCTOR}`]], err);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new StartFailure(`the PostgreSQL host in ${target.setting} does not resolve`, [setting, cause, ['to do', `correct the host name in ${target.setting}`]], err);
  }
  if (code === '28P01' || code === '28000') {
    return new StartFailure(`PostgreSQL at ${where} refused the sign-in`, [
      setting,
      cause,
      ['to do', `check the user name and password in ${target.setting} (the role must exist and be allowed to log in, and pg_hba.conf must admit this host); ${DOCTOR}`],
    ], err);
  }
  if (code === '3D000') {
    return new StartFailure(`the database named in ${target.setting} does not exist on ${where}`, [
      setting,
      cause,
      ['to do', `create it (CREATE DATABASE … OWNER <the DATABASE_URL role>), or correct the database name in ${target.setting}; a start creates the DATABASE_URL database itself when its role may create databases`],
    ], err);
  }
  if (code === '42501' && /create database/i.test(message)) {
    return new StartFailure(`the database named in ${target.setting} does not exist, and its role may not create it`, [
      setting,
      cause,
      ['to do', `create the database as an administrator (CREATE DATABASE … OWNER <the ${target.setting} role>), or grant that role CREATEDB, then start again`],
    ], err);
  }
  return new StartFailure(`PostgreSQL at ${where} failed while the service prepared ${target.role}`, [setting, cause, ['to do', `run again with LOG_LEVEL=debug for the stack trace; ${DOCTOR}`]], err);
}

/** The HTTP listener could not bind PORT. */
export function listenFailure(err: unknown, port: number): StartFailure {
  const e = err as { code?: string; message?: string };
  if (e?.code === 'EADDRINUSE') {
    return new StartFailure(`port ${port} is already in use`, [
      ['setting', `PORT (${port})`],
      ['cause', e.message ?? String(err)],
      ['to do', `stop the process listening on port ${port} (ss -ltnp 'sport = :${port}' names it; it may be another npm start), or start on another port with PORT=<port>`],
    ], err);
  }
  if (e?.code === 'EACCES') {
    return new StartFailure(`port ${port} may not be opened by this user`, [
      ['setting', `PORT (${port})`],
      ['cause', e.message ?? String(err)],
      ['to do', 'use a port from 1024 up (PORT=3000) and put a proxy or load balancer on the privileged port'],
    ], err);
  }
  return new StartFailure(`the HTTP listener on port ${port} failed`, [['setting', `PORT (${port})`], ['cause', e?.message ?? String(err)]], err);
}

/**
 * What the process prints when main() fails: a StartFailure or a configuration error as it is,
 * anything else as its message with a line on what to do; the stack trace (and its causes) only
 * when asked for with LOG_LEVEL=debug.
 */
export function startFailureText(err: unknown, debug: boolean): string {
  let text: string;
  if (err instanceof StartFailure || (err instanceof Error && /^(Invalid configuration|Refusing to start|Cannot start)/.test(err.message))) {
    text = err.message;
  } else if (err instanceof Error && /sealed with an unknown key/.test(err.message)) {
    text = new StartFailure('the database holds secrets encrypted with another key than this start has', [
      ['setting', 'SECRET_ENCRYPTION_KEY (or APP_ENCRYPTION_KEY), and SECRET_ENCRYPTION_KEYS_PREVIOUS'],
      ['cause', err.message],
      [
        'to do',
        'start with the key the data was stored with; after a rotation, list the old key in SECRET_ENCRYPTION_KEYS_PREVIOUS. Without the setting, development keeps its key in DATA_DIR/dev-secrets.json, so a new DATA_DIR on an existing database has another key',
      ],
    ]).message;
  } else {
    const message = err instanceof Error ? err.message : String(err);
    text = `Cannot start: ${message || 'an error without a message'}\n  - to do: run again with LOG_LEVEL=debug for the stack trace; ${DOCTOR}`;
  }
  if (debug) {
    const stacks: string[] = [];
    for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++) stacks.push(e.stack ?? String(e));
    if (stacks.length) text += `\n\n${stacks.join('\n  caused by: ')}`;
  }
  return text + '\n';
}
