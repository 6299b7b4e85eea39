import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import type { TestApp } from '../../support/test-app';

/**
 * tenantFixture plus the people the SSO tests need: an organization administrator whose
 * role can write organizations but grants nothing else (for the default-role delegation
 * rule), and extra roles of org A and of the partner to choose as default roles.
 */
export function ssoFixture() {
  const f = tenantFixture();
  const domain = f.emails.adminA.split('@')[1];
  return {
    ...f,
    emails: { ...f.emails, ssoAdminA: `sso-admin-a@${domain}` } as Record<string, string>,
    roles: [
      ...(f.roles ?? []),
      { key: 'ssoAdminRoleA', scope: 'organization' as const, organization: 'orgA', name: 'SSO admin', permissions: ['organizations:write', 'organizations:read'] },
      { key: 'orgReadRoleA', scope: 'organization' as const, organization: 'orgA', name: 'Org reader', permissions: ['organizations:read'] },
      { key: 'partnerReadRole', scope: 'partner' as const, partner: 'partner', name: 'Partner reader', permissions: ['organizations:read'] },
    ],
    users: [
      ...(f.users ?? []),
      { key: 'ssoAdminA', email: `sso-admin-a@${domain}`, name: 'SSO Admin A', memberships: [{ organization: 'orgA', role: 'ssoAdminRoleA' }] },
    ],
  };
}

export type Api = ReturnType<typeof api>;

/** supertest bound to one bearer token. */
export function api(t: TestApp, token: string | null) {
  const withAuth = (req: request.Test) => (token ? req.set('Authorization', `Bearer ${token}`) : req);
  return {
    get: (path: string) => withAuth(request(t.http).get(`/api/v1${path}`)),
    post: (path: string, body?: object) => withAuth(request(t.http).post(`/api/v1${path}`)).send(body ?? {}),
    patch: (path: string, body: object) => withAuth(request(t.http).patch(`/api/v1${path}`)).send(body),
    delete: (path: string) => withAuth(request(t.http).delete(`/api/v1${path}`)),
  };
}

export interface FakeIssuer {
  /** http://127.0.0.1:<port>, the issuer the default document names. */
  issuer: string;
  /** Every request path received. */
  paths: string[];
  /** Replaces how the discovery document is answered. */
  respond(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): void;
  /** Serves a well-formed document whose endpoints live on this server (the default). */
  serveDefault(): void;
  serveJson(document: unknown): void;
  documentFor(issuer: string): Record<string, string>;
  close(): Promise<void>;
}

/** A minimal OIDC discovery endpoint on loopback that can misbehave on demand. */
export async function startFakeIssuer(): Promise<FakeIssuer> {
  let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = () => undefined;
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    paths.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const documentFor = (iss: string) => ({
    issuer: iss,
    authorization_endpoint: `${iss}/authorize`,
    token_endpoint: `${iss}/token`,
    userinfo_endpoint: `${iss}/userinfo`,
    jwks_uri: `${iss}/jwks`,
  });
  const serveJson = (document: unknown) => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
  };
  const fake: FakeIssuer = {
    issuer,
    paths,
    respond: (h) => {
      handler = h;
    },
    serveDefault: () => serveJson(documentFor(issuer)),
    serveJson,
    documentFor,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  fake.serveDefault();
  return fake;
}

/** A valid domain name of exactly `length` characters (labels of `letter`), ending in `.example`. */
export function domainOfLength(length: number, letter: string): string {
  const suffix = '.example';
  let remaining = length - suffix.length;
  const labels: string[] = [];
  while (remaining > 0) {
    const size = Math.min(63, remaining === 64 ? 62 : remaining);
    labels.push(letter.repeat(size));
    remaining -= size + 1;
  }
  const name = labels.join('.') + suffix;
  if (name.length !== length) throw new Error(`cannot build a domain of length ${length}`);
  return name;
}
