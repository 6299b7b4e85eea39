import { Injectable } from '@nestjs/common';
import { AuditService } from '../../audit/audit.service';
import type { VerifiedSignIn } from '../login/account-resolver.service';
import { IdentityWriterService } from '../login/identity-writer.service';
import { ownerOf } from '../login/login-provider.util';
import { LinkRejection } from '../login/sso-login.errors';
import { SsoLoginRepository } from '../login/sso-login.repository';

function refuse(code: LinkRejection['code'], reason: string): never {
  throw new LinkRejection(code, reason);
}

/**
 * The end of a self-service linking round trip (spec 1.8, docs/sso-login.md): the verified IdP
 * identity is attached to the account that started it, provided that account and its session
 * still exist, the IdP reports the same email, and no other account holds the identity. Runs in
 * the sign-in pipeline's transaction; a refusal throws a LinkRejection, which the pipeline rolls
 * back and audits.
 */
@Injectable()
export class IdentityLinkerService {
  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly identities: IdentityWriterService,
    private readonly audit: AuditService,
  ) {}

  async attach({ session, subject, identity, profile, idpTokens }: VerifiedSignIn): Promise<void> {
    const provider = await this.repo.provider(session.provider_id, { forShare: true });
    if (!provider || provider.status !== 'active') refuse('config_changed', 'provider_deactivated_during_linking');
    if (provider.generation !== session.generation) refuse('config_changed', 'provider_reconfigured_during_linking');

    const user = session.link_user_id ? await this.repo.userById(session.link_user_id) : null;
    if (!user || user.status !== 'active') refuse('user_gone', user ? 'account_disabled' : 'account_deleted');
    if (!session.link_session_id || !(await this.repo.sessionActive(session.link_session_id, user.id))) refuse('session_invalid', 'initiating_session_ended');
    const member = provider.org_id ? await this.repo.isOrganizationMember(provider.org_id, user.id) : await this.repo.isPartnerMember(provider.partner_id!, user.id);
    if (!member) refuse('user_gone', 'membership_removed');
    if (identity.email.toLowerCase() !== user.email.toLowerCase()) refuse('email_mismatch', 'idp_email_differs_from_account_email');

    const holder = await this.repo.identityBySubject(provider.id, subject);
    if (holder && holder.user_id !== user.id) refuse('identity_in_use', 'subject_linked_to_another_user');
    // Linking is explicit: a new account at the same IdP replaces the one linked before.
    await this.repo.removeOtherIdentities(user.id, provider.id, subject);
    const owner = ownerOf(provider);
    const linked = await this.identities.link({ ...owner, providerId: provider.id, userId: user.id, email: identity.email, profile, subject, tokens: idpTokens });
    if (!linked) refuse('identity_in_use', 'subject_linked_to_another_user');
    await this.audit.record({
      action: 'sso.identity.linked',
      ...owner,
      resourceType: 'user',
      resourceId: user.id,
      actor: { type: 'user', id: user.id },
      details: { providerId: provider.id },
    });
  }
}
