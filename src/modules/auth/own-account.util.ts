import type { Principal } from '../../common/principal';
import { AuthErrors } from './auth.errors';
import type { AuthRepository, UserAuthRow } from './auth.repository';

/** The key context of a user's sealed TOTP seeds (current and pending): the seed of one user never opens as another's. */
export const totpContext = (userId: string) => `users.totp_secret:${userId}`;

/** The signed-in person's own account. */
export async function requireUser(repo: AuthRepository, principal: Principal): Promise<UserAuthRow> {
  const user = principal.userId ? await repo.userById(principal.userId) : null;
  if (!user) throw AuthErrors.invalidCredentials();
  return user;
}

/** Account self-service (password, MFA) belongs to the person at a session, never to an API key acting for them. */
export async function requireSessionUser(repo: AuthRepository, principal: Principal): Promise<UserAuthRow> {
  if (principal.kind !== 'user' || !principal.sessionId) throw AuthErrors.sessionRequired();
  return requireUser(repo, principal);
}
