import { Injectable } from '@nestjs/common';
import { SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { SsoLoginRepository } from './sso-login.repository';

/** Tokens an IdP issued with a sign-in (OIDC), kept sealed with the identity link. */
export interface IdpTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
}

/** SecretBoxService contexts of an identity's IdP tokens: they only open for the same provider and subject. */
export const identityTokenContext = (column: 'access_token' | 'refresh_token', providerId: string, externalId: string) =>
  `user_sso_identities.${column}:${providerId}:${externalId}`;

/**
 * Writes the identity link of a verified IdP login (spec 2.5), IdP tokens sealed at rest.
 * Runs inside the caller's transaction.
 */
@Injectable()
export class IdentityWriterService {
  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly box: SecretBoxService,
  ) {}

  /** Null when the subject is already linked to another user; nothing is written then. */
  link(input: {
    orgId: string | null;
    partnerId: string | null;
    providerId: string;
    userId: string;
    email: string;
    profile: Record<string, unknown>;
    subject: string;
    tokens: IdpTokens | null;
  }): Promise<{ id: string; inserted: boolean } | null> {
    const { subject, tokens, providerId } = input;
    return this.repo.upsertIdentity({
      orgId: input.orgId,
      partnerId: input.partnerId,
      userId: input.userId,
      providerId,
      externalId: subject,
      email: input.email,
      profile: input.profile,
      accessTokenSealed: tokens && this.box.encrypt(tokens.accessToken, identityTokenContext('access_token', providerId, subject)),
      refreshTokenSealed: tokens && tokens.refreshToken !== null ? this.box.encrypt(tokens.refreshToken, identityTokenContext('refresh_token', providerId, subject)) : null,
      tokenExpiresAt: tokens?.expiresAt ?? null,
    });
  }
}
