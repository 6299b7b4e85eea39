import { ANONYMOUS, Principal } from '../../common/principal';
import { newOwner, requireOwnerWrite } from './ownership.util';

const orgAdmin: Principal = { ...ANONYMOUS, kind: 'user', scope: 'organization', orgId: 'o1', partnerId: 'p1', orgIds: ['o1'] };
const tech: Principal = { ...ANONYMOUS, kind: 'user', scope: 'partner', partnerId: 'p1', partnerIds: ['p1'], orgIds: ['o1', 'o2'], partnerWide: true };
/** A technician with selected organizations: reaches some organizations of the partner, not all. */
const selectedTech: Principal = { ...tech, orgIds: ['o1'], partnerWide: false };
const siteUser: Principal = { ...orgAdmin, allowedSiteIds: ['s1'] };

describe('ownership of partner-wide and organization content', () => {
  it('gives a partner-scope caller a partner-wide owner', () => {
    expect(newOwner(tech, 'partner', undefined, 'script')).toEqual({ partnerId: 'p1', orgId: null });
  });

  it('refuses partner-wide ownership to an organization session', () => {
    expect(() => newOwner(orgAdmin, 'partner', undefined, 'script')).toThrow(expect.objectContaining({ code: 'partner_scope_required' }));
  });

  it('defaults an organization session to its own organization and requires orgId from a technician', () => {
    expect(newOwner(orgAdmin, undefined, undefined, 'script')).toEqual({ partnerId: null, orgId: 'o1' });
    expect(() => newOwner(tech, 'organization', undefined, 'script')).toThrow(expect.objectContaining({ code: 'validation_failed' }));
    expect(newOwner(tech, 'organization', 'o2', 'script')).toEqual({ partnerId: null, orgId: 'o2' });
  });

  it('refuses organization-wide content to a site-restricted caller', () => {
    expect(() => newOwner(siteUser, 'organization', undefined, 'script')).toThrow(expect.objectContaining({ code: 'site_access_denied' }));
    expect(() => requireOwnerWrite(siteUser, { partnerId: null, orgId: 'o1' }, 'script')).toThrow(expect.objectContaining({ code: 'site_access_denied' }));
  });

  it('lets only the owning partner change partner-wide content', () => {
    expect(() => requireOwnerWrite(tech, { partnerId: 'p1', orgId: null }, 'script')).not.toThrow();
    expect(() => requireOwnerWrite(tech, { partnerId: 'p2', orgId: null }, 'script')).toThrow(expect.objectContaining({ code: 'partner_scope_required' }));
    expect(() => requireOwnerWrite(orgAdmin, { partnerId: 'p1', orgId: null }, 'script')).toThrow(expect.objectContaining({ code: 'partner_scope_required' }));
  });

  it('keeps partner-wide content from a technician who does not reach every organization', () => {
    expect(() => newOwner(selectedTech, 'partner', undefined, 'script')).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(() => requireOwnerWrite(selectedTech, { partnerId: 'p1', orgId: null }, 'script')).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(requireOwnerWrite(selectedTech, { partnerId: null, orgId: 'o1' }, 'script')).toBeUndefined();
  });
});
