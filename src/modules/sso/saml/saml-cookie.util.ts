import type { CookieOptions } from 'express';
import { LOGIN_SESSION_TTL_SECONDS } from '../login/state-cookie.util';

/** The assertion consumer service (spec 1.10: {base_url}/api/v1/sso/saml/acs, HTTP-POST). */
export const SAML_ACS_PATH = '/api/v1/sso/saml/acs';

/**
 * The svc_sso_state cookie of a SAML round trip: the same signed value as OIDC's, scoped to
 * the ACS instead of the OIDC callback. The IdP returns the browser with a cross-site POST,
 * on which browsers withhold SameSite=Lax cookies, so with Secure cookies (production) it is
 * SameSite=None. Without Secure, browsers refuse SameSite=None, so development keeps Lax,
 * which a same-site IdP (e.g. one on localhost) still satisfies.
 */
export function samlStateCookieOptions(secure: boolean): CookieOptions {
  return { httpOnly: true, secure, sameSite: secure ? 'none' : 'lax', path: SAML_ACS_PATH, maxAge: LOGIN_SESSION_TTL_SECONDS * 1000 };
}

/** For res.clearCookie: the attributes that identify the cookie to the browser. */
export function clearedSamlStateCookieOptions(secure: boolean): CookieOptions {
  return { httpOnly: true, secure, sameSite: secure ? 'none' : 'lax', path: SAML_ACS_PATH };
}
