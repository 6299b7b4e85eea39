import { documentErrors, errorCodes, sharedErrorResponses, type RouteFacts } from './error-responses';

const route = (over: Partial<RouteFacts> = {}): RouteFacts => ({
  auth: { kind: 'user' },
  throttled: false,
  declared: {},
  uuidParams: { path: [], query: [] },
  validates: { body: false, query: false },
  reachesDatabase: true,
  ...over,
});

describe('the error responses of an operation', () => {
  it('lists 503 database_unavailable last for an operation that reaches the database, by reference to the shared response', () => {
    expect([...errorCodes('get', {}, route()).entries()]).toEqual([
      [401, ['unauthenticated']],
      [500, ['internal_error']],
      [503, ['database_unavailable']],
    ]);
    const op: { responses?: Record<string, Record<string, unknown>> } = {};
    documentErrors('get', op, route());
    expect(op.responses?.['503']).toEqual({ $ref: '#/components/responses/DatabaseUnavailable' });
  });

  it('gives the shared 503 the Retry-After header in seconds, as it gives the 429', () => {
    const shared = sharedErrorResponses() as Record<string, { headers?: Record<string, unknown> }>;
    expect(shared.DatabaseUnavailable.headers).toEqual({ 'Retry-After': { description: expect.any(String), schema: { type: 'integer', minimum: 1 } } });
    expect(shared.DatabaseUnavailable.headers).toEqual(shared.RateLimited.headers);
    expect(shared.InternalError.headers).toBeUndefined();
  });

  it('gives an operation that never reaches the database only the 503 codes it declares, without Retry-After', () => {
    const probe = route({ auth: { kind: 'public' }, reachesDatabase: false, declared: { 503: ['draining', 'not_ready'] } });
    expect(errorCodes('get', {}, probe).get(503)).toEqual(['draining', 'not_ready']);
    const op: { responses?: Record<string, { headers?: unknown }> } = {};
    documentErrors('get', op, probe);
    expect(op.responses?.['503'].headers).toBeUndefined();
    expect(errorCodes('get', {}, route({ auth: { kind: 'public' }, reachesDatabase: false })).has(503)).toBe(false);
  });

  it('adds database_unavailable, with Retry-After, beside the 503 codes an operation that reaches the database declares', () => {
    const op: { responses?: Record<string, { headers?: Record<string, unknown>; description?: string }> } = {};
    documentErrors('post', op, route({ declared: { 503: ['idp_unavailable'] } }));
    expect(op.responses?.['503'].description).toBe('Service unavailable: `idp_unavailable`, `database_unavailable`.');
    expect(op.responses?.['503'].headers).toHaveProperty('Retry-After');
  });
});
