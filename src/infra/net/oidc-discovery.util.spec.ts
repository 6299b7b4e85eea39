import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { ScriptedResolver } from '../../../test/support/dns/scripted-resolver';
import { DiscoveryError, OidcEndpointName } from './net.errors';
import { discoverOidc, MAX_OIDC_URL_LENGTH } from './oidc-discovery.util';
import { SafeFetchService } from './safe-fetch.service';

async function failure(promise: Promise<unknown>): Promise<DiscoveryError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DiscoveryError);
    return error as DiscoveryError;
  }
  throw new Error('expected discovery to fail');
}

describe('discoverOidc', () => {
  let server: http.Server;
  let issuer: string;
  let respond: (res: http.ServerResponse) => void;
  const paths: string[] = [];
  const resolver = new ScriptedResolver()
    .answer('idp.example.com', ['93.184.216.34'])
    .answer('metadata.example.com', ['169.254.169.254'])
    .answer('internal.example.com', ['10.0.0.7']);
  const client = new SafeFetchService({ resolver, allowInsecureLoopback: true, timeoutMs: 300, maxBytes: 4096 });

  const documentFor = (iss: string): Record<string, unknown> => ({
    issuer: iss,
    authorization_endpoint: `${iss}/authorize`,
    token_endpoint: `${iss}/token`,
    userinfo_endpoint: `${iss}/userinfo`,
    jwks_uri: `${iss}/jwks`,
    response_types_supported: ['code'],
  });
  const serveJson = (value: unknown) => {
    respond = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      paths.push(req.url ?? '');
      respond(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    paths.length = 0;
    serveJson(documentFor(issuer));
  });

  it('returns the issuer and the four endpoints from the well-known document', async () => {
    await expect(discoverOidc(client, issuer)).resolves.toEqual({
      issuer,
      authorizationUrl: `${issuer}/authorize`,
      tokenUrl: `${issuer}/token`,
      userInfoUrl: `${issuer}/userinfo`,
      jwksUrl: `${issuer}/jwks`,
    });
    expect(paths).toEqual(['/.well-known/openid-configuration']);
  });

  it('drops one trailing slash of the configured issuer before appending the well-known path', async () => {
    await expect(discoverOidc(client, `${issuer}/`)).resolves.toMatchObject({ issuer });
    expect(paths).toEqual(['/.well-known/openid-configuration']);
  });

  it('accepts a document issuer that differs only by a trailing slash, and returns it as written', async () => {
    serveJson({ ...documentFor(issuer), issuer: `${issuer}/` });

    await expect(discoverOidc(client, issuer)).resolves.toMatchObject({ issuer: `${issuer}/` });
  });

  it('keeps the issuer path, as multi-tenant IdPs need', async () => {
    serveJson(documentFor(`${issuer}/tenant-1/v2.0`));

    await expect(discoverOidc(client, `${issuer}/tenant-1/v2.0`)).resolves.toMatchObject({
      tokenUrl: `${issuer}/tenant-1/v2.0/token`,
    });
    expect(paths).toEqual(['/tenant-1/v2.0/.well-known/openid-configuration']);
  });

  it('accepts endpoints on a public host other than the issuer', async () => {
    serveJson({ ...documentFor(issuer), jwks_uri: 'https://idp.example.com/keys' });

    await expect(discoverOidc(client, issuer)).resolves.toMatchObject({ jwksUrl: 'https://idp.example.com/keys' });
  });

  it.each([
    ['another issuer', (iss: string) => `${iss}/evil-SECRET`],
    ['two trailing slashes', (iss: string) => `${iss}//`],
    ['a different scheme', (iss: string) => iss.replace('http:', 'https:')],
  ])('refuses a document naming %s, without quoting it', async (_label, other) => {
    serveJson({ ...documentFor(issuer), issuer: other(issuer) });

    const error = await failure(discoverOidc(client, issuer));

    expect(error.reason).toBe('issuer_mismatch');
    expect(error.message).not.toContain('SECRET');
  });

  it('refuses a document without an issuer', async () => {
    const { issuer: _omitted, ...rest } = documentFor(issuer);
    serveJson(rest);

    expect((await failure(discoverOidc(client, issuer))).reason).toBe('issuer_mismatch');
  });

  it.each<[OidcEndpointName]>([['authorization_endpoint'], ['token_endpoint'], ['userinfo_endpoint'], ['jwks_uri']])(
    'refuses a document without %s',
    async (field) => {
      const document = documentFor(issuer);
      delete document[field];
      serveJson(document);

      const error = await failure(discoverOidc(client, issuer));

      expect(error.reason).toBe('missing_endpoint');
      expect(error.endpoint).toBe(field);
    },
  );

  it.each([[''], [42], [null], [['https://idp.example.com/a']]])('treats the endpoint value %p as missing', async (value) => {
    serveJson({ ...documentFor(issuer), token_endpoint: value });

    expect(await failure(discoverOidc(client, issuer))).toMatchObject({ reason: 'missing_endpoint', endpoint: 'token_endpoint' });
  });

  it.each<[OidcEndpointName]>([['authorization_endpoint'], ['token_endpoint'], ['userinfo_endpoint'], ['jwks_uri']])(
    'refuses a %s longer than 500 characters',
    async (field) => {
      const long = `${issuer}/${'a'.repeat(MAX_OIDC_URL_LENGTH - issuer.length)}`;
      serveJson({ ...documentFor(issuer), [field]: long });

      expect(long).toHaveLength(MAX_OIDC_URL_LENGTH + 1);
      expect(await failure(discoverOidc(client, issuer))).toMatchObject({ reason: 'endpoint_too_long', endpoint: field });
    },
  );

  it('accepts an endpoint of exactly 500 characters', async () => {
    const longest = `${issuer}/${'a'.repeat(MAX_OIDC_URL_LENGTH - issuer.length - 1)}`;
    serveJson({ ...documentFor(issuer), userinfo_endpoint: longest });

    await expect(discoverOidc(client, issuer)).resolves.toMatchObject({ userInfoUrl: longest });
  });

  it.each<[OidcEndpointName, string, string]>([
    ['authorization_endpoint', 'https://10.0.0.1/authorize', 'private_address'],
    ['token_endpoint', 'https://metadata.example.com/token', 'private_address'],
    ['userinfo_endpoint', 'https://[fd00::1]/userinfo', 'private_address'],
    ['jwks_uri', 'https://internal.example.com/jwks', 'private_address'],
    ['token_endpoint', 'https://[::ffff:10.0.0.1]/token', 'private_address'],
    ['userinfo_endpoint', 'http://idp.example.com/userinfo', 'insecure_scheme'],
    ['jwks_uri', 'https://user:pw@idp.example.com/jwks', 'invalid_url'],
    ['authorization_endpoint', 'https://unknown.example.com/authorize', 'dns_failure'],
  ])('refuses a %s of %s (%s)', async (field, url, reason) => {
    serveJson({ ...documentFor(issuer), [field]: url });

    expect(await failure(discoverOidc(client, issuer))).toMatchObject({ reason, endpoint: field });
  });

  it('fails cleanly when the document is larger than the cap', async () => {
    serveJson({ ...documentFor(issuer), padding: 'x'.repeat(5000) });

    expect((await failure(discoverOidc(client, issuer))).reason).toBe('too_large');
  });

  it('fails cleanly when the server is slower than the timeout', async () => {
    respond = (res) => setTimeout(() => res.writeHead(200).end(JSON.stringify(documentFor(issuer))), 600);

    expect((await failure(discoverOidc(client, issuer))).reason).toBe('timeout');
  });

  it('fails on a body that is not JSON, without quoting it', async () => {
    respond = (res) => res.writeHead(200).end('<html>SECRET</html>');

    const error = await failure(discoverOidc(client, issuer));

    expect(error.reason).toBe('invalid_json');
    expect(error.message).not.toContain('SECRET');
  });

  it.each([[[]], ['a string'], [null]])('fails on the JSON %p, which is not an object', async (value) => {
    serveJson(value);

    expect((await failure(discoverOidc(client, issuer))).reason).toBe('invalid_document');
  });

  it('fails on an error status', async () => {
    respond = (res) => res.writeHead(404).end();

    expect(await failure(discoverOidc(client, issuer))).toMatchObject({ reason: 'http_status' });
  });

  it('does not follow a redirect', async () => {
    respond = (res) => res.writeHead(302, { location: 'https://idp.example.com/.well-known/openid-configuration' }).end();

    expect((await failure(discoverOidc(client, issuer))).reason).toBe('redirect');
  });

  it('refuses an http issuer', async () => {
    expect((await failure(discoverOidc(client, 'http://idp.example.com'))).reason).toBe('insecure_scheme');
  });

  it('refuses a loopback http issuer when the development setting is off', async () => {
    const production = new SafeFetchService({ resolver });

    expect((await failure(discoverOidc(production, issuer))).reason).toBe('insecure_scheme');
    expect(paths).toEqual([]);
  });

  it('refuses an issuer whose host resolves to a private address, before fetching', async () => {
    expect((await failure(discoverOidc(client, 'https://internal.example.com'))).reason).toBe('private_address');
  });

  it.each([
    ['not a url'],
    ['https://idp.example.com/?tenant=1'],
    ['https://idp.example.com/#frag'],
    ['https://idp.example.com/?'],
    [`https://idp.example.com/${'a'.repeat(MAX_OIDC_URL_LENGTH)}`],
  ])('refuses the issuer %p as malformed', async (value) => {
    expect((await failure(discoverOidc(client, value))).reason).toBe('invalid_issuer');
  });
});
