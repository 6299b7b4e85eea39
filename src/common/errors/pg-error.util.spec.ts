import { AppException } from './app.exception';
import { mapViolations, pgViolation } from './pg-error.util';

const pgError = (code: string, message = 'boom') => Object.assign(new Error(message), { code });

describe('pgViolation', () => {
  it('names unique, foreign-key and check violations by their SQLSTATE', () => {
    expect(pgViolation(pgError('23505'))).toBe('unique');
    expect(pgViolation(pgError('23503'))).toBe('foreign_key');
    expect(pgViolation(pgError('23514'))).toBe('check');
  });

  it('treats 42501 as a row-security refusal only when PostgreSQL says so', () => {
    expect(pgViolation(pgError('42501', 'new row violates row-level security policy for table "sites"'))).toBe('row_security');
    expect(pgViolation(pgError('42501', 'permission denied for table audit_logs'))).toBeNull();
  });

  it('ignores errors without a SQLSTATE', () => {
    expect(pgViolation(new Error('x'))).toBeNull();
    expect(pgViolation(null)).toBeNull();
  });
});

describe('mapViolations', () => {
  const conflict = () => AppException.conflict('name_taken', 'taken');

  it('replaces a mapped violation with the client error', async () => {
    await expect(mapViolations(() => Promise.reject(pgError('23505')), { unique: conflict })).rejects.toMatchObject({ code: 'name_taken' });
  });

  it('rethrows violations it was not told about unchanged', async () => {
    const original = pgError('23503');
    await expect(mapViolations(() => Promise.reject(original), { unique: conflict })).rejects.toBe(original);
  });

  it('returns the statement result when nothing fails', async () => {
    await expect(mapViolations(() => Promise.resolve(3), { unique: conflict })).resolves.toBe(3);
  });
});
