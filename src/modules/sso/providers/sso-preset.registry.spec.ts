import { fillPreset, findPreset, SSO_PRESETS } from './sso-preset.registry';

function preset(id: string) {
  const found = findPreset(id);
  if (!found) throw new Error(`no preset ${id}`);
  return found;
}

describe('SSO presets', () => {
  it('offers exactly the preset ids of spec 2.8, with their protocols', () => {
    expect(SSO_PRESETS.map((p) => [p.id, p.type])).toEqual([
      ['enterprise-directory', 'oidc'],
      ['workforce-identity', 'oidc'],
      ['workspace-suite', 'oidc'],
      ['identity-platform', 'oidc'],
      ['enterprise-directory-saml', 'saml'],
      ['workforce-identity-saml', 'saml'],
      ['identity-broker-saml', 'saml'],
      ['federation-server-saml', 'saml'],
      ['workspace-suite-saml', 'saml'],
    ]);
  });

  it('gives every preset an attribute mapping with email and name, and every OIDC preset the openid scope', () => {
    for (const p of SSO_PRESETS) {
      expect(p.attributeMapping.email).toBeTruthy();
      expect(p.attributeMapping.name).toBeTruthy();
      if (p.type === 'oidc') expect(p.scopes?.split(' ')).toContain('openid');
    }
  });

  it.each([
    ['enterprise-directory', { tenant: 'contoso.onmicrosoft.com' }, 'issuer', 'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0'],
    ['workforce-identity', { domain: 'Acme' }, 'issuer', 'https://acme.okta.com'],
    ['workspace-suite', {}, 'issuer', 'https://accounts.google.com'],
    ['identity-platform', { domain: 'acme' }, 'issuer', 'https://acme.auth0.com/'],
    ['enterprise-directory-saml', { tenant: '8f1c2d3e-0000-4000-8000-000000000001' }, 'ssoUrl', 'https://login.microsoftonline.com/8f1c2d3e-0000-4000-8000-000000000001/saml2'],
    ['workforce-identity-saml', { domain: 'acme', appId: 'exk1abc' }, 'ssoUrl', 'https://acme.okta.com/app/exk1abc/sso/saml'],
    ['identity-broker-saml', { domain: 'acme', appId: '1234' }, 'ssoUrl', 'https://acme.onelogin.com/trust/saml2/http-post/sso/1234'],
    ['federation-server-saml', { 'adfs-server': 'sts.acme.example' }, 'ssoUrl', 'https://sts.acme.example/adfs/ls'],
    ['workspace-suite-saml', { idpId: 'C01abc' }, 'ssoUrl', 'https://accounts.google.com/o/saml2/idp?idpid=C01abc'],
  ])('fills the %s URL template from its parameters', (id, params, field, expected) => {
    const result = fillPreset(preset(id), params, true);
    expect(result).toHaveProperty(`fill.${field}`, expected);
  });

  it('pre-fills scopes and the attribute mapping of the preset', () => {
    const result = fillPreset(preset('workforce-identity'), { domain: 'acme' }, true);
    expect(result).toMatchObject({ fill: { scopes: 'openid profile email groups', attributeMapping: { email: 'email', groups: 'groups' } } });
  });

  it('requires every parameter when the URL is to be built', () => {
    expect(fillPreset(preset('workforce-identity-saml'), { domain: 'acme' }, true)).toEqual({
      problems: [{ field: 'presetParams.appId', message: 'presetParams.appId is required by workforce-identity-saml' }],
    });
  });

  it('needs no parameters when the URL was given explicitly, and builds none', () => {
    const result = fillPreset(preset('workforce-identity'), undefined, false);
    expect(result).toEqual({ fill: expect.not.objectContaining({ issuer: expect.anything() }) });
  });

  it.each([
    ['a host parameter that would change the host', 'workforce-identity', { domain: 'evil.example/x#' }],
    ['a host parameter with user info', 'workforce-identity', { domain: 'me@evil.example' }],
    ['a path parameter with a slash', 'enterprise-directory', { tenant: '../other' }],
    ['a path parameter with a query', 'workspace-suite-saml', { idpId: 'x&idpid=y' }],
    ['a non-string parameter', 'enterprise-directory', { tenant: 42 }],
    ['an unknown parameter', 'workspace-suite', { tenant: 'x' }],
  ])('rejects %s', (_label, id, params) => {
    expect(fillPreset(preset(id), params as Record<string, unknown>, true)).toEqual({ problems: [expect.objectContaining({ field: expect.stringMatching(/^presetParams\./) })] });
  });
});
