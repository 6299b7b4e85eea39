import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { AllExceptionsFilter, databaseUnavailable, postgresError } from './all-exceptions.filter';

function pgError(code: string, message = 'server text that must not leak'): DatabaseError {
  const e = new DatabaseError(message, message.length, 'error');
  e.code = code;
  return e;
}

const networkError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -111, syscall: 'connect' });

/** Answers the filter gives to one exception: status, headers and body. */
function answer(exception: unknown) {
  const headers: Record<string, string> = {};
  const out: { status?: number; body?: Record<string, unknown> } = {};
  const res = {
    headersSent: false,
    getHeader: () => undefined,
    setHeader: (k: string, v: string) => void (headers[k.toLowerCase()] = v),
    status(s: number) {
      out.status = s;
      return this;
    },
    type() {
      return this;
    },
    json(b: Record<string, unknown>) {
      out.body = b;
      return this;
    },
  };
  const host = { switchToHttp: () => ({ getRequest: () => ({ id: 'req-1' }), getResponse: () => res }) };
  const filter = new AllExceptionsFilter();
  (filter as unknown as { logger: { warn: jest.Mock; error: jest.Mock } }).logger = { warn: jest.fn(), error: jest.fn() };
  filter.catch(exception, host as never);
  return { ...out, headers, logger: (filter as unknown as { logger: { warn: jest.Mock; error: jest.Mock } }).logger };
}

describe('database failures that are not the request\'s fault', () => {
  it.each([
    ['a fast shutdown ending the session', pgError('57P01')],
    ['a crash shutdown', pgError('57P02')],
    ['a server starting up', pgError('57P03')],
    ['too many connections', pgError('53300')],
    ['a connection exception', pgError('08006')],
    ['a session ended for idling in a transaction', pgError('25P03')],
    ['a refused connection', networkError('ECONNREFUSED')],
    ['a reset connection', networkError('ECONNRESET')],
    ['a connection cut mid-query', new Error('Connection terminated unexpectedly')],
    ['a broken pooled client', new Error('Client has encountered a connection error and is not queryable')],
    ['a fast shutdown wrapped by TypeORM', new QueryFailedError('SELECT 1', [], pgError('57P01'))],
    ['a refused connection given as the cause', new Error('could not open the transaction', { cause: networkError('ECONNREFUSED') })],
  ])('answers %s with 503 database_unavailable', (_what, error) => {
    expect(databaseUnavailable(error)).toMatchObject({ statusCode: 503, code: 'database_unavailable', error: 'The database is unavailable; retry shortly' });
  });

  it.each([
    ['a statement cancelled by statement_timeout', pgError('57014')],
    ['no pooled connection in time', new Error('timeout exceeded when trying to connect')],
    ['a connection that did not open in time', new Error('Connection terminated due to connection timeout')],
  ])('answers %s with 503 saying the database did not answer in time', (_what, error) => {
    expect(databaseUnavailable(error)).toMatchObject({ statusCode: 503, code: 'database_unavailable', error: 'The database did not answer in time; retry shortly' });
  });

  it.each([
    ['a NUL character', pgError('22021')],
    ['a duplicate', pgError('23505')],
    ['a row-level-security refusal', pgError('42501')],
    ['a syntax error (a bug: stays a 500)', pgError('42601')],
    ['an error whose message only mentions a connection', new Error('Connection terminated unexpectedly, said the IdP')],
    ['something that is not an error', 'ECONNREFUSED'],
  ])('leaves %s to the other mappings', (_what, error) => {
    expect(databaseUnavailable(error)).toBeNull();
  });

  it('sends Retry-After and retryAfter with the 503, and logs the reason without the server text', () => {
    const a = answer(pgError('57P01', 'terminating connection due to administrator command'));
    expect(a.status).toBe(503);
    expect(a.headers['retry-after']).toBe('2');
    expect(a.body).toEqual({ success: false, statusCode: 503, code: 'database_unavailable', error: 'The database is unavailable; retry shortly', requestId: 'req-1', retryAfter: 2 });
    expect(a.logger.warn).toHaveBeenCalledWith({ requestId: 'req-1', reason: '57P01' }, 'Database unavailable: answered 503');
    expect(JSON.stringify(a.logger.warn.mock.calls)).not.toContain('administrator');
    expect(a.logger.error).not.toHaveBeenCalled();
  });

  it('keeps input errors 400 and unknown database errors 500', () => {
    expect(postgresError(pgError('22021'))).toMatchObject({ statusCode: 400 });
    const a = answer(pgError('42601'));
    expect(a.status).toBe(500);
    expect(a.headers['retry-after']).toBeUndefined();
  });
});
