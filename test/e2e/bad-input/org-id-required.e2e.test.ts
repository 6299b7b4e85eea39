import request from 'supertest';
import { ORG_ID_REQUIRED } from '../../../src/common/errors/common.errors';
import { tenantFixture } from '../../factories/tenant.factory';
import { startTestApp, type TestApp } from '../../support/test-app';

/** Issue 15 item 6: tenancy, PAM and SSO each worded "orgId is required" their own way. */
describe('a partner-scope caller that names no organization', () => {
  let t: TestApp;
  let tech: string;

  beforeAll(async () => {
    t = await startTestApp();
    const ids = await t.seed(tenantFixture());
    tech = `Bearer ${await t.token(ids.tech, { mfa: true })}`;
  });
  afterAll(() => t.close());

  const expected = {
    success: false,
    statusCode: 400,
    code: 'validation_failed',
    error: expect.any(String),
    requestId: expect.any(String),
    details: [{ field: 'orgId', message: ORG_ID_REQUIRED }],
  };

  it.each([
    ['tenancy', 'post', '/api/v1/sites', { name: 'No org' }],
    ['PAM', 'post', '/api/v1/pam/rules/preview', { matchSigner: 'Contoso' }],
    ['SSO providers', 'get', '/api/v1/sso/providers', undefined],
    ['SSO domains', 'post', '/api/v1/sso/domains', { domain: 'no-org.example' }],
  ] as const)('gets the same answer from %s', async (_module, method, path, body) => {
    const r = request(t.http)[method](path).set('Authorization', tech);
    const res = body ? await r.send(body) : await r;
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: expected });
  });
});
