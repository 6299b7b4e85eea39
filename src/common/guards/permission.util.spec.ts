import { ANONYMOUS, canAccessSite, hasPermission } from '../principal';

describe('hasPermission', () => {
  it('grants an exact permission', () => expect(hasPermission(['devices:read'], 'devices:read')).toBe(true));
  it('grants through a resource wildcard', () => expect(hasPermission(['devices:*'], 'devices:execute')).toBe(true));
  it('grants everything through the global wildcard', () => expect(hasPermission(['*'], 'organizations:write')).toBe(true));
  it('does not confuse a resource prefix with another resource', () => expect(hasPermission(['device:*', 'devices:read'], 'devices:write')).toBe(false));
  it('denies when nothing is held', () => expect(hasPermission([], 'devices:read')).toBe(false));
});

describe('canAccessSite', () => {
  it('allows every site when the caller is not site-restricted', () => expect(canAccessSite(ANONYMOUS, 'x')).toBe(true));
  it('allows only listed sites for a restricted caller', () => {
    const p = { ...ANONYMOUS, allowedSiteIds: ['s1'] };
    expect(canAccessSite(p, 's1')).toBe(true);
    expect(canAccessSite(p, 's2')).toBe(false);
    expect(canAccessSite(p, null)).toBe(false);
  });
});
