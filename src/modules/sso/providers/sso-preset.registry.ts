import { AttributeMapping, SsoProviderType } from './sso-provider.types';

/** A host name (or the labels of one) that may be written into a URL template's host. */
const HOST_PARAM = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** One path segment or query value: no characters that would change the URL's structure. */
const SEGMENT_PARAM = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface PresetParameter {
  name: string;
  /** `host`: written into the host name; `segment`: a path segment or query value. */
  kind: 'host' | 'segment';
  description: string;
}

export interface SsoPreset {
  id: string;
  name: string;
  type: SsoProviderType;
  parameters: PresetParameter[];
  /** OIDC: issuer template with `{param}` placeholders. */
  issuer?: string;
  /** SAML: IdP single-sign-on URL template with `{param}` placeholders. */
  ssoUrl?: string;
  scopes?: string;
  nameIdFormat?: string;
  attributeMapping: AttributeMapping;
}

const OIDC_STANDARD: AttributeMapping = { email: 'email', name: 'name', firstName: 'given_name', lastName: 'family_name' };
const CLAIMS_2005 = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
/** The identity-claims attribute names of spec 1.10 (the 2005/05 and 2008/06 namespaces). */
const WS_CLAIMS: AttributeMapping = {
  email: `${CLAIMS_2005}/emailaddress`,
  name: `${CLAIMS_2005}/name`,
  firstName: `${CLAIMS_2005}/givenname`,
  lastName: `${CLAIMS_2005}/surname`,
  groups: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups',
};
const EMAIL_NAME_ID = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

const tenant: PresetParameter = { name: 'tenant', kind: 'segment', description: 'Directory (tenant) id or primary domain' };
const domain: PresetParameter = { name: 'domain', kind: 'host', description: 'Your organization sub-domain at the vendor' };
const appId: PresetParameter = { name: 'appId', kind: 'segment', description: 'Application id assigned by the IdP' };

/**
 * Spec 2.8. Ids are the neutral stand-ins of the spec; the hosts are the vendors' real
 * ones, so an administrator only types the tenant-specific parameters. Mapping choices
 * are explained in docs/sso-presets.md.
 */
export const SSO_PRESETS: readonly SsoPreset[] = [
  {
    id: 'enterprise-directory',
    name: 'Enterprise directory (OIDC)',
    type: 'oidc',
    parameters: [tenant],
    issuer: 'https://login.microsoftonline.com/{tenant}/v2.0',
    scopes: 'openid profile email',
    attributeMapping: { ...OIDC_STANDARD, groups: 'groups' },
  },
  {
    id: 'workforce-identity',
    name: 'Workforce identity (OIDC)',
    type: 'oidc',
    parameters: [domain],
    issuer: 'https://{domain}.okta.com',
    scopes: 'openid profile email groups',
    attributeMapping: { ...OIDC_STANDARD, groups: 'groups' },
  },
  {
    id: 'workspace-suite',
    name: 'Workspace suite (OIDC)',
    type: 'oidc',
    parameters: [],
    issuer: 'https://accounts.google.com',
    scopes: 'openid profile email',
    attributeMapping: { ...OIDC_STANDARD },
  },
  {
    id: 'identity-platform',
    name: 'Identity platform (OIDC)',
    type: 'oidc',
    parameters: [domain],
    issuer: 'https://{domain}.auth0.com/',
    scopes: 'openid profile email',
    attributeMapping: { ...OIDC_STANDARD },
  },
  {
    id: 'enterprise-directory-saml',
    name: 'Enterprise directory (SAML)',
    type: 'saml',
    parameters: [tenant],
    ssoUrl: 'https://login.microsoftonline.com/{tenant}/saml2',
    nameIdFormat: EMAIL_NAME_ID,
    attributeMapping: { ...WS_CLAIMS },
  },
  {
    id: 'workforce-identity-saml',
    name: 'Workforce identity (SAML)',
    type: 'saml',
    parameters: [domain, appId],
    ssoUrl: 'https://{domain}.okta.com/app/{appId}/sso/saml',
    nameIdFormat: EMAIL_NAME_ID,
    attributeMapping: { email: 'email', name: 'name', firstName: 'firstName', lastName: 'lastName', groups: 'groups' },
  },
  {
    id: 'identity-broker-saml',
    name: 'Identity broker (SAML)',
    type: 'saml',
    parameters: [domain, appId],
    ssoUrl: 'https://{domain}.onelogin.com/trust/saml2/http-post/sso/{appId}',
    nameIdFormat: EMAIL_NAME_ID,
    attributeMapping: { email: 'User.email', name: 'User.name', firstName: 'User.FirstName', lastName: 'User.LastName', groups: 'memberOf' },
  },
  {
    id: 'federation-server-saml',
    name: 'Federation server (SAML)',
    type: 'saml',
    parameters: [{ name: 'adfs-server', kind: 'host', description: 'Host name of your federation server' }],
    ssoUrl: 'https://{adfs-server}/adfs/ls',
    nameIdFormat: EMAIL_NAME_ID,
    attributeMapping: { ...WS_CLAIMS },
  },
  {
    id: 'workspace-suite-saml',
    name: 'Workspace suite (SAML)',
    type: 'saml',
    parameters: [{ name: 'idpId', kind: 'segment', description: 'IdP id shown in the SAML app settings' }],
    ssoUrl: 'https://accounts.google.com/o/saml2/idp?idpid={idpId}',
    nameIdFormat: EMAIL_NAME_ID,
    attributeMapping: { email: 'email', name: 'name', firstName: 'firstName', lastName: 'lastName', groups: 'groups' },
  },
];

const byId = new Map(SSO_PRESETS.map((p) => [p.id, p]));

export function findPreset(id: string): SsoPreset | undefined {
  return byId.get(id);
}

export interface PresetFill {
  issuer?: string;
  ssoUrl?: string;
  scopes?: string;
  nameIdFormat?: string;
  attributeMapping: AttributeMapping;
}

export type PresetProblem = { field: string; message: string };

/**
 * The values a preset contributes, with its URL template filled from `params`. Parameter
 * values are restricted to host-name or path-segment characters, so a value can never
 * move the URL to another host or path. `needsUrl` is false when the caller gave the URL
 * explicitly, in which case the parameters are optional.
 */
export function fillPreset(
  preset: SsoPreset,
  params: Record<string, unknown> | undefined,
  needsUrl: boolean,
): { fill: PresetFill } | { problems: PresetProblem[] } {
  const given = params ?? {};
  const problems: PresetProblem[] = [];
  for (const key of Object.keys(given)) {
    if (!preset.parameters.some((p) => p.name === key)) {
      problems.push({ field: `presetParams.${key}`, message: `${preset.id} has no parameter ${key}` });
    }
  }
  const values = new Map<string, string>();
  for (const parameter of preset.parameters) {
    const raw = given[parameter.name];
    if (raw === undefined) {
      if (needsUrl) problems.push({ field: `presetParams.${parameter.name}`, message: `presetParams.${parameter.name} is required by ${preset.id}` });
      continue;
    }
    const value = typeof raw === 'string' ? (parameter.kind === 'host' ? raw.trim().toLowerCase() : raw.trim()) : '';
    const pattern = parameter.kind === 'host' ? HOST_PARAM : SEGMENT_PARAM;
    if (!pattern.test(value) || value.length > 200) {
      problems.push({
        field: `presetParams.${parameter.name}`,
        message: parameter.kind === 'host' ? `presetParams.${parameter.name} must be a host name` : `presetParams.${parameter.name} must be letters, digits, '.', '_' or '-'`,
      });
      continue;
    }
    values.set(parameter.name, value);
  }
  if (problems.length > 0) return { problems };

  const template = preset.type === 'oidc' ? preset.issuer : preset.ssoUrl;
  const url = needsUrl && template ? template.replace(/\{([a-zA-Z-]+)\}/g, (_, name: string) => values.get(name) as string) : undefined;
  const fill: PresetFill = { attributeMapping: { ...preset.attributeMapping } };
  if (preset.scopes) fill.scopes = preset.scopes;
  if (preset.nameIdFormat) fill.nameIdFormat = preset.nameIdFormat;
  if (url && preset.type === 'oidc') fill.issuer = url;
  if (url && preset.type === 'saml') fill.ssoUrl = url;
  return { fill };
}
