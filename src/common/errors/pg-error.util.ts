import type { AppException } from './app.exception';

export type PgViolation = 'unique' | 'foreign_key' | 'check' | 'row_security';

const SQLSTATE: Record<string, PgViolation> = { '23505': 'unique', '23503': 'foreign_key', '23514': 'check' };

/** The kind of constraint a PostgreSQL error reports, if it is one the API answers with a 4xx. */
export function pgViolation(err: unknown): PgViolation | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e.code !== 'string') return null;
  // 42501 is also "permission denied" for a missing GRANT, which is a bug and must stay a 500.
  // A partner-wide write without all-organization access is not a cross-tenant write: the global
  // filter answers it 403, so no service may translate it into its own not-found.
  if (e.code === '42501') {
    const message = typeof e.message === 'string' ? e.message : '';
    return message.includes('row-level security') && !message.startsWith('partner_wide_write_denied') ? 'row_security' : null;
  }
  return SQLSTATE[e.code] ?? null;
}

/**
 * Runs one statement and turns the constraint violations listed in `map` into client errors.
 * The transaction is aborted by the failed statement, so the caller must throw, never continue.
 */
export async function mapViolations<T>(fn: () => Promise<T>, map: Partial<Record<PgViolation, () => AppException>>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const kind = pgViolation(err);
    const translate = kind ? map[kind] : undefined;
    if (translate) throw translate();
    throw err;
  }
}
