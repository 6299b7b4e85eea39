import { generateSigningCredentials } from '../../../../test/support/idp/saml-idp';
import {
  changedFields,
  foreignFields,
  isAcceptableBrowserUrl,
  missingForLogin,
  normaliseAllowedDomains,
  normaliseCertificates,
  normaliseScopes,
} from './provider-config.util';

const completeOidc = {
  issuer: 'https://idp.example.com',
  clientId: 'client',
  authorizationUrl: 'https://idp.example.com/authorize',
  tokenUrl: 'https://idp.example.com/token',
  userInfoUrl: 'https://idp.example.com/userinfo',
  jwksUrl: 'https://idp.example.com/jwks',
  entityId: null,
  ssoUrl: null,
  certificate: null,
};

describe('missingForLogin', () => {
  it('finds nothing missing on a fully configured OIDC provider with a secret', () => {
    expect(missingForLogin('oidc', completeOidc, true)).toEqual([]);
  });

  it('names the client secret and every missing endpoint of an OIDC provider', () => {
    expect(missingForLogin('oidc', { ...completeOidc, tokenUrl: null, jwksUrl: '' }, false)).toEqual(['clientSecret', 'tokenUrl', 'jwksUrl']);
  });

  it('names the entity id, SSO URL and certificate of a SAML provider', () => {
    expect(missingForLogin('saml', { ...completeOidc, entityId: 'urn:idp' }, false)).toEqual(['ssoUrl', 'certificate']);
  });
});

describe('foreignFields', () => {
  it('rejects SAML fields on an OIDC provider and OIDC fields on a SAML provider', () => {
    expect(foreignFields('oidc', { name: 'x', certificate: 'pem', forceAuthn: false }).map((p) => p.field)).toEqual(['certificate', 'forceAuthn']);
    expect(foreignFields('saml', { clientSecret: 's', scopes: 'openid' }).map((p) => p.field)).toEqual(['clientSecret', 'scopes']);
  });
});

describe('normaliseAllowedDomains', () => {
  it('normalises, de-duplicates and joins the domains', () => {
    expect(normaliseAllowedDomains(' Example.COM, https://sub.example.com/ ,example.com., bücher.example ')).toEqual({
      value: 'example.com,sub.example.com,xn--bcher-kva.example',
    });
  });

  it('stores an empty list as null (every domain allowed)', () => {
    expect(normaliseAllowedDomains(' , ')).toEqual({ value: null });
  });

  it('rejects an entry that is not a domain', () => {
    expect(normaliseAllowedDomains('example.com, 10.0.0.1')).toEqual({ problem: { field: 'allowedDomains', message: '"10.0.0.1" is not a domain name' } });
  });

  it('rejects a list whose normalised form exceeds 1000 characters', () => {
    const labels = Array.from({ length: 100 }, (_, i) => `d${String(i).padStart(3, '0')}x.example`);
    expect(labels.join(',').length).toBeGreaterThan(1000);
    expect(normaliseAllowedDomains(labels.join(','))).toHaveProperty('problem.field', 'allowedDomains');
  });
});

describe('normaliseScopes', () => {
  it('keeps scope tokens once each and requires openid', () => {
    expect(normaliseScopes('openid  profile email profile')).toEqual({ value: 'openid profile email' });
    expect(normaliseScopes('profile email')).toHaveProperty('problem.message', 'scopes must include openid');
  });

  it('rejects characters outside the RFC 6749 scope-token set', () => {
    expect(normaliseScopes('openid "quoted"')).toHaveProperty('problem.field', 'scopes');
    expect(normaliseScopes('openid back\\slash')).toHaveProperty('problem.field', 'scopes');
  });
});

describe('normaliseCertificates', () => {
  const first = generateSigningCredentials('first').certificatePem;
  const second = generateSigningCredentials('second').certificatePem;

  it('accepts several PEM certificates so an IdP can rotate keys', () => {
    const result = normaliseCertificates(`${first}\n\n${second}`);
    expect(result).toHaveProperty('value');
    expect(((result as { value: string }).value.match(/BEGIN CERTIFICATE/g) ?? []).length).toBe(2);
  });

  it('rejects text around the certificates, a damaged certificate and no certificate at all', () => {
    expect(normaliseCertificates(`junk\n${first}`)).toHaveProperty('problem.field', 'certificate');
    const lines = first.trim().split('\n');
    const truncated = [...lines.slice(0, 3), ...lines.slice(-2)].join('\n');
    expect(normaliseCertificates(truncated)).toHaveProperty('problem.field', 'certificate');
    expect(normaliseCertificates('not a certificate')).toHaveProperty('problem.field', 'certificate');
  });
});

describe('changedFields', () => {
  it('lists only the fields whose values differ, comparing objects by content', () => {
    const current = { name: 'A', scopes: 'openid', attributeMapping: { email: 'email', name: 'name' }, allowedDomains: null as string | null };
    expect(changedFields(current, { name: 'A', attributeMapping: { name: 'name', email: 'email' }, allowedDomains: 'x.example' })).toEqual(['allowedDomains']);
    expect(changedFields(current, { attributeMapping: { email: 'mail', name: 'name' } })).toEqual(['attributeMapping']);
  });
});

describe('isAcceptableBrowserUrl', () => {
  it('accepts https, including intranet hosts the service itself never calls', () => {
    expect(isAcceptableBrowserUrl('https://adfs.corp.example/adfs/ls', false)).toBe(true);
    expect(isAcceptableBrowserUrl('https://10.0.0.5/adfs/ls', false)).toBe(true);
  });

  it('accepts plain-http loopback only when development loopback IdPs are allowed', () => {
    expect(isAcceptableBrowserUrl('http://127.0.0.1:8080/sso', true)).toBe(true);
    expect(isAcceptableBrowserUrl('http://127.0.0.1:8080/sso', false)).toBe(false);
    expect(isAcceptableBrowserUrl('http://idp.example.com/sso', true)).toBe(false);
  });

  it('rejects credentials in the URL and other schemes', () => {
    expect(isAcceptableBrowserUrl('https://user:pw@idp.example.com/sso', false)).toBe(false);
    expect(isAcceptableBrowserUrl('javascript:alert(1)', true)).toBe(false);
  });
});
