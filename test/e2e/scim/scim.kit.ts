import request from 'supertest';

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** A SCIM client of the service as an IdP's provisioning client calls it: bearer token, `application/scim+json` both ways. */
export function scimClient(http: Parameters<typeof request>[0], token: string) {
  const send = (r: request.Test, body?: object) => (body === undefined ? r : r.set('Content-Type', 'application/scim+json').send(JSON.stringify(body)));
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${token}`).set('Accept', 'application/scim+json');
  return {
    get: (path: string) => auth(request(http).get(`/api/v1/scim/v2${path}`)),
    post: (path: string, body: object) => send(auth(request(http).post(`/api/v1/scim/v2${path}`)), body),
    put: (path: string, body: object) => send(auth(request(http).put(`/api/v1/scim/v2${path}`)), body),
    patch: (path: string, body: object) => send(auth(request(http).patch(`/api/v1/scim/v2${path}`)), body),
    delete: (path: string) => auth(request(http).delete(`/api/v1/scim/v2${path}`)),
  };
}
