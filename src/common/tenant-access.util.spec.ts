import { ANONYMOUS, Principal } from './principal';
import { requireSite, requireSiteSubset, targetOrg } from './tenant-access.util';

const orgCaller: Principal = { ...ANONYMOUS, kind: 'user', scope: 'organization', orgId: 'o1', orgIds: ['o1'] };
const partnerCaller: Principal = { ...ANONYMOUS, kind: 'user', scope: 'partner', partnerId: 'p1', partnerIds: ['p1'], orgIds: ['o1', 'o2'] };
const restricted: Principal = { ...orgCaller, allowedSiteIds: ['s1'] };

describe('targetOrg', () => {
  it('defaults to the organization of an organization-scope session', () => expect(targetOrg(orgCaller, undefined)).toBe('o1'));

  it('requires an explicit organization from a partner-scope caller', () => {
    expect(() => targetOrg(partnerCaller, undefined)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(targetOrg(partnerCaller, 'o2')).toBe('o2');
  });

  it('answers an organization outside the caller reach as not found', () => {
    expect(() => targetOrg(orgCaller, 'o2')).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('site checks', () => {
  it('lets an unrestricted caller touch any site and organization-wide rows', () => {
    expect(() => requireSite(orgCaller, 's9')).not.toThrow();
    expect(() => requireSite(orgCaller, null)).not.toThrow();
    expect(() => requireSiteSubset(orgCaller, null)).not.toThrow();
  });

  it('refuses a restricted caller other sites and organization-wide rows', () => {
    expect(() => requireSite(restricted, 's1')).not.toThrow();
    expect(() => requireSite(restricted, 's2')).toThrow(expect.objectContaining({ code: 'site_access_denied' }));
    expect(() => requireSite(restricted, null)).toThrow(expect.objectContaining({ code: 'site_access_denied' }));
  });

  it('lets a restricted caller grant only a subset of their own sites', () => {
    expect(() => requireSiteSubset(restricted, ['s1'])).not.toThrow();
    expect(() => requireSiteSubset(restricted, ['s1', 's2'])).toThrow(expect.objectContaining({ code: 'site_access_denied' }));
    expect(() => requireSiteSubset(restricted, null)).toThrow(expect.objectContaining({ code: 'site_access_denied' }));
  });
});
