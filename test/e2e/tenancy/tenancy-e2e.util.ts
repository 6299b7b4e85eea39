import request from 'supertest';
import type { Response } from 'supertest';
import { tenantFixture } from '../../factories/tenant.factory';
import { startTestApp, TestApp } from '../../support/test-app';

export type Caller = ReturnType<typeof callerFor>;

function callerFor(t: TestApp, bearer: string) {
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${bearer}`);
  return {
    get: (path: string) => auth(request(t.http).get(`/api/v1${path}`)),
    post: (path: string, body?: object) => auth(request(t.http).post(`/api/v1${path}`)).send(body ?? {}),
    patch: (path: string, body?: object) => auth(request(t.http).patch(`/api/v1${path}`)).send(body ?? {}),
    delete: (path: string) => auth(request(t.http).delete(`/api/v1${path}`)),
    /** A raw body with a JSON content type, for malformed-JSON cases. */
    raw: (method: 'post' | 'patch', path: string, body: string) =>
      auth(request(t.http)[method](`/api/v1${path}`)).set('Content-Type', 'application/json').send(body),
  };
}

/** The error body of docs/api-conventions.md, with the expected status and code. */
export function expectError(res: Response, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.body).toEqual(expect.objectContaining({ success: false, statusCode: status, code, error: expect.any(String), requestId: expect.any(String) }));
}

type StandardFixture = ReturnType<typeof tenantFixture>;

export interface TenancyWorld {
  t: TestApp;
  f: StandardFixture;
  ids: Record<string, string>;
  /** Callers of the standard fixture; `*NoMfa` hold a session that did not satisfy MFA. */
  as: {
    adminA: Caller;
    adminANoMfa: Caller;
    readerA: Caller;
    siteA1: Caller;
    adminB: Caller;
    tech: Caller;
    techA: Caller;
  };
  caller(bearer: string): Caller;
  /** A session for any user with a membership (MFA-satisfied unless told otherwise). */
  session(userId: string, mfa?: boolean): Promise<Caller>;
}

/**
 * Boots the app and seeds one standard tenant fixture (unique names), optionally extended with
 * more roles and users, with sessions for each standard user.
 */
export async function startTenancyWorld(extend: (f: StandardFixture) => StandardFixture = (f) => f): Promise<TenancyWorld> {
  const t = await startTestApp();
  const f = extend(tenantFixture());
  const ids = await t.seed(f);
  const session = async (userId: string, mfa = true) => callerFor(t, await t.token(userId, { mfa }));
  return {
    t,
    f,
    ids,
    as: {
      adminA: await session(ids.adminA),
      adminANoMfa: await session(ids.adminA, false),
      readerA: await session(ids.readerA),
      siteA1: await session(ids.siteA1User),
      adminB: await session(ids.adminB),
      tech: await session(ids.tech),
      techA: await session(ids.techA),
    },
    caller: (bearer) => callerFor(t, bearer),
    session,
  };
}
