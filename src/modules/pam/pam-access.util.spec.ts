import { ANONYMOUS, type Principal } from '../../common/principal';
import { requireOrg, requireSiteWrite, targetOrg } from './pam-access.util';

const ORG_A = '00000000-0000-4000-8000-00000000000a';
const ORG_B = '00000000-0000-4000-8000-00000000000b';
const SITE = '00000000-0000-4000-8000-0000000000c1';

function principal(overrides: Partial<Principal>): Principal {
  return { ...ANONYMOUS, kind: 'user', ...overrides };
}

describe('targetOrg', () => {
  it('defaults to the caller organization for an organization-scope session', () => {
    expect(targetOrg(principal({ scope: 'organization', orgId: ORG_A, orgIds: [ORG_A] }), undefined)).toBe(ORG_A);
  });

  it('requires a partner-scope caller to name the organization', () => {
    expect(() => targetOrg(principal({ scope: 'partner', orgIds: [ORG_A, ORG_B] }), undefined)).toThrow(
      expect.objectContaining({ code: 'validation_failed' }),
    );
    expect(targetOrg(principal({ scope: 'partner', orgIds: [ORG_A, ORG_B] }), ORG_B)).toBe(ORG_B);
  });

  it('answers an organization outside the caller reach as not found', () => {
    expect(() => targetOrg(principal({ scope: 'organization', orgId: ORG_A, orgIds: [ORG_A] }), ORG_B)).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
    expect(() => requireOrg(principal({ scope: 'partner', orgIds: [] }), ORG_A)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('requireSiteWrite', () => {
  it('lets a caller with every site write anything', () => {
    expect(() => requireSiteWrite(principal({ allowedSiteIds: null }), null)).not.toThrow();
    expect(() => requireSiteWrite(principal({ allowedSiteIds: null }), SITE)).not.toThrow();
  });

  it('lets a site-restricted caller write only within their sites, never organization-wide', () => {
    const restricted = principal({ allowedSiteIds: [SITE] });
    expect(() => requireSiteWrite(restricted, SITE)).not.toThrow();
    expect(() => requireSiteWrite(restricted, null)).toThrow(expect.objectContaining({ code: 'site_access_denied' }));
    expect(() => requireSiteWrite(restricted, ORG_B)).toThrow(expect.objectContaining({ code: 'site_access_denied' }));
  });
});
