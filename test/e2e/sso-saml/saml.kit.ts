/**
 * Helpers for the SAML e2e tests: SAML providers written straight into the database, the
 * SP-initiated start read back as the IdP reads it, and the HTTP-POST to the ACS as the
 * browser holding the state cookie sends it. The rest (exchange, counts of what a sign-in
 * minted, audit rows) is the OIDC kit's.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { SignedXml } from 'xml-crypto';
import { BuildResponseOptions, decodeSamlResponse, parseAuthnRequest, ParsedAuthnRequest, TestSamlIdp } from '../../support/idp/saml-idp';
import { ownerQuery, TestApp } from '../../support/test-app';
import { configurerSql, freshIp } from '../sso-login/sso-login.kit';

export const ACS_PATH = '/api/v1/sso/saml/acs';
export const ACS_URL = `http://localhost:3000${ACS_PATH}`;
export const spEntityIdOf = (providerId: string) => `http://localhost:3000/api/v1/sso/saml/metadata/${providerId}`;

export interface SamlProviderInput {
  orgId?: string;
  partnerId?: string;
  idp: TestSamlIdp;
  name?: string;
  status?: 'active' | 'inactive' | 'testing';
  /** Defaults to the IdP's own certificate. */
  certificate?: string | null;
  entityId?: string | null;
  ssoUrl?: string | null;
  nameIdFormat?: string | null;
  forceAuthn?: boolean;
  attributeMapping?: Record<string, string>;
  autoProvision?: boolean;
  defaultRoleId?: string | null;
  defaultRoleSetBy?: string | null;
  allowedDomains?: string | null;
  enforceSso?: boolean;
  trustsIdpMfa?: boolean;
  createdAt?: string;
  /**
   * The administrator who configured it (sign-in admits only accounts whose permissions they hold);
   * default: a `*` administrator of the owner.
   */
  configuredBy?: string | null;
}

export async function insertSamlProvider(p: SamlProviderInput): Promise<string> {
  const id = randomUUID();
  const partner = !!p.partnerId;
  await ownerQuery(
    `INSERT INTO sso_providers (id, org_id, partner_id, name, type, status, entity_id, sso_url, certificate, name_id_format, force_authn,
       attribute_mapping, auto_provision, default_role_id, default_role_set_by, allowed_domains, enforce_sso, trusts_idp_mfa, created_at, updated_by)
     VALUES ($1, $2, $3, $4, 'saml', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, coalesce($18::timestamptz, now()),
       ${configurerSql('$19')})`,
    [
      id,
      p.orgId ?? null,
      p.partnerId ?? null,
      p.name ?? `SAML ${id.slice(0, 8)}`,
      p.status ?? 'active',
      p.entityId === undefined ? p.idp.entityId : p.entityId,
      p.ssoUrl === undefined ? p.idp.ssoUrl : p.ssoUrl,
      p.certificate === undefined ? p.idp.certificatePem : p.certificate,
      p.nameIdFormat ?? null,
      p.forceAuthn ?? false,
      JSON.stringify(p.attributeMapping ?? { email: 'email', name: 'name' }),
      partner ? false : (p.autoProvision ?? true),
      p.defaultRoleId ?? null,
      p.defaultRoleSetBy ?? null,
      p.allowedDomains ?? null,
      p.enforceSso ?? false,
      p.trustsIdpMfa ?? false,
      p.createdAt ?? null,
      p.configuredBy ?? null,
    ],
  );
  return id;
}

export interface SamlStarted {
  status: number;
  /** The IdP SSO URL the service sent the browser to. */
  location: string;
  /** `svc_sso_state=…`, ready for a Cookie header. */
  cookie: string;
  setCookie: string;
  body: Record<string, unknown>;
  /** The AuthnRequest as the IdP reads it (null when the start did not redirect). */
  request: ParsedAuthnRequest | null;
}

export async function startSamlLogin(t: TestApp, path: string, ip = freshIp()): Promise<SamlStarted> {
  const res = await request(t.http).get(path).set('X-Forwarded-For', ip);
  const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('svc_sso_state=')) ?? '';
  const location = res.headers.location ?? '';
  return {
    status: res.status,
    location,
    cookie: setCookie.split(';')[0],
    setCookie,
    body: res.body,
    request: res.status === 302 ? parseAuthnRequest(location) : null,
  };
}

export interface AcsAnswer {
  status: number;
  location: string;
  setCookie: string[];
}

/** The browser's auto-submitted form: SAMLResponse and RelayState, with the cookie it holds. */
export async function postAcs(t: TestApp, form: { SAMLResponse?: string; RelayState?: string | null }, cookie?: string): Promise<AcsAnswer> {
  let req = request(t.http).post(ACS_PATH).type('form');
  if (cookie) req = req.set('Cookie', cookie);
  const fields = Object.fromEntries(Object.entries(form).filter(([, value]) => value !== undefined && value !== null));
  const res = await req.send(fields);
  return { status: res.status, location: res.headers.location ?? '', setCookie: ([] as string[]).concat(res.headers['set-cookie'] ?? []) };
}

/** Start at the service, answer as the IdP with `build`, post to the ACS with the same cookie. */
export async function samlRoundTrip(
  t: TestApp,
  loginPath: string,
  build: (request: ParsedAuthnRequest) => string,
): Promise<AcsAnswer & { started: SamlStarted; response: string }> {
  const started = await startSamlLogin(t, loginPath);
  if (started.status !== 302 || !started.request) throw new Error(`SAML login start answered ${started.status}: ${JSON.stringify(started.body)}`);
  const response = build(started.request);
  const answer = await postAcs(t, { SAMLResponse: response, RelayState: started.request.relayState }, started.cookie);
  return { ...answer, started, response };
}

/** The newest audit row of a refused SAML sign-in for this provider. */
export async function lastRejection(providerId: string): Promise<{ code: string; reason: string } | undefined> {
  const [row] = await ownerQuery<{ details: { code: string; reason: string } }>(
    `SELECT details FROM audit_logs WHERE resource_id = $1 AND action = 'sso.login.rejected' ORDER BY created_at DESC, id DESC LIMIT 1`,
    [providerId],
  );
  return row?.details;
}

/**
 * A response the test IdP builds unsigned, edited as text, then signed on the assertion with
 * the IdP's own key: for content the IdP has no option for (e.g. its authentication context).
 */
export function editedResponseFor(idp: TestSamlIdp, req: ParsedAuthnRequest, options: BuildResponseOptions, edit: (xml: string) => string): string {
  const xml = edit(decodeSamlResponse(idp.buildResponseFor(req, { ...options, sign: 'none' })));
  const assertionId = /<saml:Assertion[^>]* ID="([^"]+)"/.exec(xml)![1];
  const signer = new SignedXml({
    privateKey: idp.privateKeyPem,
    publicCert: idp.certificatePem,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signer.addReference({
    xpath: `//*[local-name(.)='Assertion' and @ID='${assertionId}']`,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: `//*[local-name(.)='Assertion']/*[local-name(.)='Issuer']`, action: 'after' } });
  return Buffer.from(signer.getSignedXml(), 'utf8').toString('base64');
}
