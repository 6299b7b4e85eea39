import { amrIncludesMfa, domainAllowed, emailVerification, mapIdentity, profileClaims, sourcedEmailVerification } from './oidc-claims.util';

const MAPPING = { email: 'email', name: 'name' };

describe('OIDC claim mapping', () => {
  it('maps email and name through the attribute mapping and normalises the domain', () => {
    const mapped = mapIdentity({ email: 'Ann@Customer-A.Example', name: 'Ann Example' }, MAPPING, 'unknown');
    expect(mapped).toEqual({ email: 'Ann@Customer-A.Example', domain: 'customer-a.example', name: 'Ann Example', groups: [], emailVerification: 'unknown' });
  });

  it('reads custom claim names, and builds the name from first and last name when name is absent', () => {
    const mapped = mapIdentity(
      { upn: 'bob@corp.example', given_name: 'Bob', family_name: 'Builder', roles: ['a', 7, 'b'] },
      { email: 'upn', name: 'displayName', firstName: 'given_name', lastName: 'family_name', groups: 'roles' },
      'unknown',
    );
    expect(mapped).toMatchObject({ email: 'bob@corp.example', name: 'Bob Builder', groups: ['a', 'b'] });
  });

  it('falls back to the local part of the email when no name claim is usable', () => {
    expect(mapIdentity({ email: 'carol@corp.example', name: '   ' }, MAPPING, 'unknown')).toMatchObject({ name: 'carol' });
  });

  it('reports a missing or non-string email claim, and an email that is not an address', () => {
    expect(mapIdentity({ name: 'x' }, MAPPING, 'unknown')).toBe('email_claim_missing');
    expect(mapIdentity({ email: ['a@b.example'] }, MAPPING, 'unknown')).toBe('email_claim_missing');
    expect(mapIdentity({ email: 'not-an-address' }, MAPPING, 'unknown')).toBe('email_claim_invalid');
    expect(mapIdentity({ email: 'a@b@c.example' }, MAPPING, 'unknown')).toBe('email_claim_invalid');
    expect(mapIdentity({ email: 'a@127.0.0.1' }, MAPPING, 'unknown')).toBe('email_claim_invalid');
  });

  it('accepts an email of 255 characters and refuses 256', () => {
    const domain = '@corp.example';
    expect(mapIdentity({ email: `${'a'.repeat(255 - domain.length)}${domain}` }, MAPPING, 'unknown')).not.toBe('email_claim_invalid');
    expect(mapIdentity({ email: `${'a'.repeat(256 - domain.length)}${domain}` }, MAPPING, 'unknown')).toBe('email_claim_invalid');
  });

  it('reads email_verified as booleans or the strings some IdPs send, and anything else as no statement', () => {
    expect(emailVerification({ email_verified: true })).toBe('verified');
    expect(emailVerification({ email_verified: 'true' })).toBe('verified');
    expect(emailVerification({ email_verified: false })).toBe('unverified');
    expect(emailVerification({ email_verified: 'false' })).toBe('unverified');
    expect(emailVerification({})).toBe('unknown');
    expect(emailVerification({ email_verified: 1 })).toBe('unknown');
  });

  it('carries the verification it is given, never one read from the profile', () => {
    expect(mapIdentity({ email: 'a@corp.example', email_verified: true }, MAPPING, 'unknown')).toMatchObject({ emailVerification: 'unknown' });
    expect(mapIdentity({ email: 'a@corp.example' }, MAPPING, 'verified')).toMatchObject({ emailVerification: 'verified' });
  });

  describe('sourcedEmailVerification', () => {
    it('takes email_verified from UserInfo when UserInfo supplied the email', () => {
      expect(sourcedEmailVerification({ email: 'x@a.example', email_verified: true }, { email: 'y@a.example' }, 'email')).toBe('unknown');
      expect(sourcedEmailVerification({ email: 'x@a.example' }, { email: 'y@a.example', email_verified: true }, 'email')).toBe('verified');
    });

    it('takes email_verified from the ID token when only the ID token has the email', () => {
      expect(sourcedEmailVerification({ email: 'x@a.example', email_verified: true }, { sub: 's', email_verified: true }, 'email')).toBe('verified');
      expect(sourcedEmailVerification({ email: 'x@a.example' }, { sub: 's', email_verified: true }, 'email')).toBe('unknown');
    });

    it('lets a false in either source win', () => {
      expect(sourcedEmailVerification({ email: 'x@a.example', email_verified: false }, { email: 'x@a.example', email_verified: true }, 'email')).toBe('unverified');
      expect(sourcedEmailVerification({ email: 'x@a.example', email_verified: true }, { email_verified: 'false' }, 'email')).toBe('unverified');
      expect(sourcedEmailVerification({ email_verified: false }, { upn: 'x@a.example' }, 'upn')).toBe('unverified');
    });

    it('never treats a non-standard email claim as verified', () => {
      expect(sourcedEmailVerification({ upn: 'x@a.example', email_verified: true }, { upn: 'x@a.example', email_verified: true }, 'upn')).toBe('unknown');
    });
  });

  it('lets UserInfo override the ID token and drops protocol claims from the profile', () => {
    const profile = profileClaims({ sub: 's', email: 'old@x.example', nonce: 'n', amr: ['mfa'], aud: 'c' }, { sub: 's', email: 'new@x.example' });
    expect(profile).toEqual({ sub: 's', email: 'new@x.example' });
  });

  it('counts MFA only when amr is an array containing mfa', () => {
    expect(amrIncludesMfa({ amr: ['pwd', 'mfa'] })).toBe(true);
    expect(amrIncludesMfa({ amr: ['pwd', 'otp'] })).toBe(false);
    expect(amrIncludesMfa({ amr: 'mfa' })).toBe(false);
    expect(amrIncludesMfa({})).toBe(false);
  });

  it('allows every domain when allowedDomains is empty, otherwise only the listed ones, exactly', () => {
    expect(domainAllowed(null, 'corp.example')).toBe(true);
    expect(domainAllowed('corp.example,other.example', 'other.example')).toBe(true);
    expect(domainAllowed('corp.example', 'sub.corp.example')).toBe(false);
    expect(domainAllowed('corp.example', 'evilcorp.example')).toBe(false);
  });
});
