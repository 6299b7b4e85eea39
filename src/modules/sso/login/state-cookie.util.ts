import { timingSafeEqual } from 'node:crypto';
import type { CookieOptions } from 'express';

/** Spec 1.1.3: the cookie that binds a login round trip to the browser that started it. */
export const STATE_COOKIE = 'svc_sso_state';
export const CALLBACK_PATH = '/api/v1/sso/callback';
export const LOGIN_SESSION_TTL_SECONDS = 600;

/** States, nonces and the HMAC are 32 random bytes or a SHA-256 digest, base64url: 43 characters. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface StateSigner {
  hmac(value: string): string;
  hmacEquals(value: string, signature: string): boolean;
}

export function stateCookieOptions(secure: boolean): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', secure, path: CALLBACK_PATH, maxAge: LOGIN_SESSION_TTL_SECONDS * 1000 };
}

/** For res.clearCookie: the attributes that identify the cookie to the browser. */
export function clearedStateCookieOptions(secure: boolean): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', secure, path: CALLBACK_PATH };
}

/** `<state>.<HMAC-SHA256(state)>`, the HMAC keyed by the encryption key. */
export function stateCookieValue(signer: StateSigner, state: string): string {
  return `${state}.${signer.hmac(state)}`;
}

export function isWellFormedState(state: unknown): state is string {
  return typeof state === 'string' && TOKEN.test(state);
}

/**
 * Whether the callback's `state` is the one this browser's cookie carries, with a valid
 * signature. Both comparisons are constant-time. Nothing is looked up or consumed here.
 */
export function stateMatchesCookie(signer: StateSigner, state: unknown, cookie: unknown): boolean {
  if (!isWellFormedState(state) || typeof cookie !== 'string') return false;
  const dot = cookie.indexOf('.');
  if (dot < 0) return false;
  const cookieState = cookie.slice(0, dot);
  const signature = cookie.slice(dot + 1);
  if (!isWellFormedState(cookieState) || !TOKEN.test(signature)) return false;
  const sameState = timingSafeEqual(Buffer.from(cookieState), Buffer.from(state));
  const signed = signer.hmacEquals(cookieState, signature);
  return sameState && signed;
}
