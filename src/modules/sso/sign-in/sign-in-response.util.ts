import type { CookieOptions, Response } from 'express';
import { STATE_COOKIE } from '../login/state-cookie.util';
import type { SignInResult } from './sign-in-pipeline.service';

/**
 * A started sign-in (OIDC or SAML, login or linking): where the IdP takes the browser, and the
 * cookie that binds the round trip to it. The protocol that started it sets the cookie's
 * attributes, since they depend on where and how its answer arrives.
 */
export interface StartedSignIn {
  /** The IdP URL, checked safe, to send the browser to. */
  authUrl: string;
  /** Value of the svc_sso_state cookie binding the attempt to this browser. */
  stateCookie: string;
  /** The svc_sso_state cookie's attributes: scoped to the path where the protocol's answer arrives. */
  cookie: CookieOptions;
}

/** Sends the browser to the IdP with the state cookie. */
export function redirectToIdp(res: Response, started: StartedSignIn): void {
  res.cookie(STATE_COOKIE, started.stateCookie, started.cookie);
  res.setHeader('Cache-Control', 'no-store');
  res.redirect(302, started.authUrl);
}

/** The end of a sign-in: the state cookie cleared once its login session was consumed, then the redirect. */
export function redirectSignedIn(res: Response, result: SignInResult, clearedCookie: CookieOptions): void {
  if (result.clearStateCookie) res.clearCookie(STATE_COOKIE, clearedCookie);
  res.setHeader('Cache-Control', 'no-store');
  res.redirect(302, result.location);
}
