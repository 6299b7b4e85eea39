import type { Scenario } from '../bench.types';

/** Marker scenario: the runner measures the bare insert baseline itself and names it this. */
export const BASELINE_NAME = 'baseline: node:http + pg, one transactional INSERT';

export const scenario: Scenario = {
  name: 'GET /api/v1/organizations (partner technician, 50 orgs)',
  order: 10,
  async prepare(ctx) {
    const orgs = Array.from({ length: 50 }, (_, i) => ({ key: `o${i}`, partner: 'p', name: `Bench Org ${i}` }));
    const ids = await ctx.seed({
      partners: [{ key: 'p', name: `Bench Partner ${Date.now()}` }],
      organizations: orgs,
      roles: [{ key: 'r', scope: 'partner', partner: 'p', name: 'Tech', permissions: ['*'] }],
      users: [{ key: 'u', email: `bench-${Date.now()}@bench.example`, partnerMembership: { partner: 'p', role: 'r', orgAccess: 'all' } }],
    });
    const token = await ctx.token(ids.u);
    return { kind: 'http', connections: 20, requests: [{ method: 'GET', path: '/api/v1/organizations', headers: { authorization: `Bearer ${token}` } }], compareWith: 'baseline' };
  },
};
