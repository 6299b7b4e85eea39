/**
 * Helpers for the attack tests of the password and MFA routes: a fresh client address per
 * request (X-Forwarded-For is trusted from loopback, so every request can come from "another
 * machine" and per-IP limits only bite where a test wants them to), TOTP codes of a given step,
 * codes that are certainly wrong, and the sign-in requests an attacker sends.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { authenticator } from 'otplib';
import request from 'supertest';
import { decodeJwt } from 'jose';
import { TOTP_SECRET } from '../../factories/tenant.factory';
import { ownerQuery, TestApp } from '../../support/test-app';

const API = '/api/v1';

export function freshIp(): string {
  const b = randomBytes(3);
  return `10.${b[0]}.${b[1]}.${b[2]}`;
}

/** The code of the TOTP step `offset` steps from now (offset 1 is still accepted: ±1 step). */
export function codeAt(offset = 0, secret = TOTP_SECRET): string {
  return authenticator.clone({ epoch: Date.now() + offset * 30_000 }).generate(secret);
}

/** A six-digit code that matches none of the steps around now. */
export function wrongCode(secret = TOTP_SECRET): string {
  const near = new Set([-2, -1, 0, 1, 2].map((o) => codeAt(o, secret)));
  for (;;) {
    const candidate = String(randomInt(0, 1_000_000)).padStart(6, '0');
    if (!near.has(candidate)) return candidate;
  }
}

export function authApi(t: TestApp) {
  return {
    login: (email: string, password: string, ip = freshIp()) =>
      request(t.http).post(`${API}/auth/login`).set('X-Forwarded-For', ip).send({ email, password }),
    verify: (mfaToken: string, code: string, ip = freshIp()) =>
      request(t.http).post(`${API}/auth/mfa/verify`).set('X-Forwarded-For', ip).send({ mfaToken, code }),
    /** The mfaToken of a password sign-in of an MFA-enrolled user. */
    challenge: async (email: string, password: string): Promise<string> => {
      const res = await request(t.http).post(`${API}/auth/login`).set('X-Forwarded-For', freshIp()).send({ email, password }).expect(200);
      if (!res.body.mfaRequired) throw new Error(`expected an MFA challenge, got ${JSON.stringify(res.body)}`);
      return res.body.mfaToken as string;
    },
    post: (path: string, token: string, body: object = {}, ip = freshIp()) =>
      request(t.http).post(`${API}${path}`).set('Authorization', `Bearer ${token}`).set('X-Forwarded-For', ip).send(body),
    get: (path: string, token: string) => request(t.http).get(`${API}${path}`).set('Authorization', `Bearer ${token}`),
  };
}

export async function sessionCount(userId: string): Promise<number> {
  return Number((await ownerQuery<{ n: string }>(`SELECT count(*) AS n FROM sessions WHERE user_id = $1`, [userId]))[0].n);
}

/** The session id (`sid`) an access token names. */
export function sessionIdOf(accessToken: string): string {
  return decodeJwt(accessToken).sid as string;
}

/** The token of a reset link in a mail body. */
export function resetTokenIn(text: string): string {
  const m = /reset-password#token=([A-Za-z0-9_-]+)/.exec(text);
  if (!m) throw new Error('no reset link in the mail');
  return m[1];
}
