import { AccountProvisioningService } from '../../tenancy/users/account-provisioning.service';
import { PersonAuthorityService } from '../../tenancy/users/person-authority.service';
import { Injectable } from '@nestjs/common';
import { hasPermission } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import { AppliedRole, GroupRoleApplier } from '../../scim/group-role.applier';
import { IdentityWriterService, type IdpTokens } from './identity-writer.service';
import { ownerOf } from './login-provider.util';
import type { MappedIdentity } from './oidc-claims.util';
import { LoginRejection } from './sso-login.errors';
import { LoginProviderRow, LoginSessionRow, LoginUserRow, SsoLoginRepository, TenantAccountRow } from './sso-login.repository';

/** What an IdP vouched for in a verified response, whatever the protocol. */
export interface VerifiedSignIn<TEvidence = unknown> {
  session: LoginSessionRow;
  /** The IdP's stable name for the person at this provider: the OIDC `sub`, the SAML external id. */
  subject: string;
  identity: MappedIdentity;
  profile: Record<string, unknown>;
  idpMfa: boolean;
  /** Null for SAML, which issues none. */
  idpTokens: IdpTokens | null;
  /** What the protocol keeps for after the sign-in (what the IdP will name the session by at sign-out). */
  evidence: TEvidence;
}

/** The account a verified identity signs in to, under the provider as re-read in the sign-in transaction. */
export interface ResolvedAccount {
  provider: LoginProviderRow;
  userId: string;
  matchedBy: 'identity' | 'email' | 'provisioned';
  identityCreated: boolean;
}

type Matched = Pick<ResolvedAccount, 'userId' | 'matchedBy'>;

function refuse(code: LoginRejection['code'], reason: string): never {
  throw new LoginRejection(code, reason);
}

/**
 * The account-resolution step of an SSO sign-in (spec 1.1.13, 1.2, 1.3, 1.6, 1.7), inside the
 * sign-in pipeline's transaction: the provider generation re-checked, the account resolved or
 * provisioned, its group mappings applied and the identity linked. A refusal throws a
 * LoginRejection; the pipeline rolls the transaction back and audits it.
 */
@Injectable()
export class AccountResolverService {
  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly identities: IdentityWriterService,
    private readonly audit: AuditService,
    private readonly groupRoles: GroupRoleApplier,
    private readonly accounts: AccountProvisioningService,
    private readonly authority: PersonAuthorityService,
  ) {}

  async resolve(input: VerifiedSignIn): Promise<ResolvedAccount> {
    const { session, subject, identity } = input;
    const provider = await this.repo.provider(session.provider_id, { forShare: true });
    if (!provider || provider.status !== 'active') refuse('sso_provider_inactive', 'provider_deactivated_during_sign_in');
    if (provider.generation !== session.generation) refuse('sso_config_changed', 'provider_reconfigured_during_sign_in');
    const account = provider.org_id ? await this.organizationAccount(provider, subject, identity) : await this.partnerAccount(provider, subject, identity);
    await this.requireConfigurerCovers(provider, account.userId);
    await this.applyGroupMappings(provider, account.userId, identity.groups);

    const linked = await this.identities.link({ ...ownerOf(provider), providerId: provider.id, userId: account.userId, email: identity.email, profile: input.profile, subject, tokens: input.idpTokens });
    if (!linked) refuse('identity_in_use', 'subject_linked_to_another_user');
    return { provider, ...account, identityCreated: linked.inserted };
  }

  /**
   * Spec 1.3 and 1.2.2 for an organization provider. A user the organization cannot see (no
   * membership, not a technician of its partner) is answered exactly as an address nobody holds,
   * by the same code path (issue 13, 10a): the organization's IdP must not learn who has an
   * account in another tenant.
   */
  private async organizationAccount(provider: LoginProviderRow, sub: string, identity: MappedIdentity): Promise<Matched> {
    const orgId = provider.org_id!;
    const { tenantActive, identity: linked, account: user } = await this.repo.subjectIn({ orgId }, provider.id, sub, identity.email);
    if (!tenantActive) refuse('no_org_access', 'organization_inactive');
    if (linked) {
      if (user?.visible) return this.admitted(user, 'identity');
      // A link to someone the organization no longer sees is stale: this is a first-time identity again.
      await this.repo.deleteIdentity(linked.id);
    }
    // Matching by email, or creating an account, trusts the email: when the IdP did not say it
    // verified it, the organization must have proved it owns the domain.
    if (identity.emailVerification === 'unknown' && !(await this.repo.domainVerifiedFor(orgId, identity.domain))) {
      refuse('sso_domain_unverified', 'email_verification_absent_and_domain_not_verified');
    }
    const found = await this.repo.accountInOrganization(orgId, identity.email);
    if (!found?.visible) return this.provision(provider, identity);
    if (await this.repo.otherIdentityOfUser(found.id, provider.id, sub)) refuse('identity_in_use', 'account_linked_to_another_subject');
    // An IdP vouching for an address does not prove the organization controls that mailbox; taking
    // over an account someone signs in to with a password needs the organization's DNS proof.
    if (found.has_password && !(await this.repo.domainVerifiedFor(orgId, identity.domain))) {
      refuse('sso_domain_unverified', 'password_account_needs_verified_domain');
    }
    return this.admitted(found, 'email');
  }

  private admitted(user: TenantAccountRow, matchedBy: Matched['matchedBy']): Matched {
    if (user.status !== 'active') refuse('user_disabled', 'account_disabled');
    if (!user.member) refuse('no_org_access', 'no_organization_membership');
    if (user.suspended) refuse('user_disabled', 'membership_suspended');
    return { userId: user.id, matchedBy };
  }

  /**
   * Spec 1.6.4: identity-first, never provisions. Someone the partner cannot see (not its
   * technician, not a member of one of its organizations) is answered as an unknown address.
   */
  private async partnerAccount(provider: LoginProviderRow, sub: string, identity: MappedIdentity): Promise<Matched> {
    const partnerId = provider.partner_id!;
    const { tenantActive, identity: linked, account: user } = await this.repo.subjectIn({ partnerId }, provider.id, sub, identity.email);
    if (!tenantActive) refuse('no_org_access', 'partner_inactive');
    if (!user?.visible) refuse('invite_required', 'no_account');
    if (!linked && (await this.repo.otherIdentityOfUser(user.id, provider.id, sub))) refuse('identity_in_use', 'account_linked_to_another_subject');
    if (user.status !== 'active') refuse('user_disabled', 'account_disabled');
    if (!user.member) refuse('invite_required', 'not_a_technician_of_this_partner');
    if (user.suspended) refuse('user_disabled', 'membership_suspended');
    return { userId: user.id, matchedBy: linked ? 'identity' : 'email' };
  }

  /**
   * Whoever configures an IdP can make it assert any identity, subject and email alike, so a
   * provider signs in only accounts whose powers its configuring administrator holds too: the
   * delegation rule of default roles (spec 1.2.4) applied to every sign-in. Without it an
   * administrator with `organizations:write` alone could sign in as the organization's owner, or
   * a technician as the partner administrator. The configurer is whoever last changed the
   * provider; they must be active and have authority over everything the account holds in the
   * provider's organization (or partner): every permission, every organization and every site
   * (PersonAuthorityService, the rule of acting on a person). An entitled administrator re-saving
   * the provider restores sign-in.
   */
  private async requireConfigurerCovers(provider: LoginProviderRow, userId: string): Promise<void> {
    const configurerId = provider.updated_by ?? provider.created_by;
    if (configurerId === userId) return;
    if (!configurerId) refuse('invalid_provider_configuration', 'provider_configurer_unknown');
    // The configurer's account and the rule of acting on a person, in one statement.
    const tenant = provider.org_id ? { orgId: provider.org_id } : { partnerId: provider.partner_id! };
    const standing = await this.authority.standing(configurerId, userId, tenant);
    if (!standing?.active) refuse('invalid_provider_configuration', 'provider_configurer_inactive');
    if (!standing.covers) refuse('invalid_provider_configuration', 'provider_configurer_not_entitled_for_account');
  }

  /**
   * Spec 1.3.3–4 and 1.2.4: only with autoProvision and a default role its configurer may still
   * grant, and only for an address on a domain the organization proved it owns by DNS. The
   * address may already have an account the organization cannot see (another tenant's user):
   * the outcome must not tell, so on the organization's own domain that account joins the
   * organization with the default role exactly as a new one would, its name, password and
   * status untouched. Without the domain proof neither is provisioned, so an IdP's word alone
   * never reaches another tenant's account.
   */
  private async provision(provider: LoginProviderRow, identity: MappedIdentity): Promise<Matched> {
    const orgId = provider.org_id!;
    if (!provider.auto_provision) refuse('user_not_found', 'no_account_and_auto_provision_off');
    const { role, configurer } = await this.grantableDefaultRole(provider);
    if (!(await this.repo.domainVerifiedFor(orgId, identity.domain))) refuse('sso_domain_unverified', 'provisioning_needs_verified_domain');

    let userId = await this.accounts.createUser(identity.email, identity.name);
    if (!userId) {
      // Held by an account this organization cannot see, or created by a concurrent sign-in.
      const existing = await this.repo.accountInOrganization(orgId, identity.email);
      if (!existing) throw new Error('An email refused as taken has no account');
      if (existing.status !== 'active') refuse('user_disabled', 'account_disabled');
      // Links it kept at this provider from a time the organization saw it are stale.
      if (!existing.visible) await this.repo.deleteIdentitiesAt(provider.id, existing.id);
      userId = existing.id;
    }
    await this.accounts.addOrgMember(orgId, userId, role.id);
    await this.audit.record({
      action: 'sso.user.provisioned',
      orgId,
      resourceType: 'user',
      resourceId: userId,
      actor: { type: 'system', id: null },
      details: { providerId: provider.id, roleId: role.id, configuredBy: configurer.id },
    });
    return { userId, matchedBy: 'provisioned' };
  }

  /**
   * Spec 1.2.4: the organization provider's default role, only while the administrator who set it
   * is active and still holds every permission it grants.
   */
  private async grantableDefaultRole(provider: LoginProviderRow): Promise<{ role: { id: string; permissions: string[] }; configurer: LoginUserRow }> {
    const orgId = provider.org_id!;
    if (!provider.default_role_id) refuse('default_role_required', 'no_default_role');
    const role = await this.repo.organizationRole(orgId, provider.default_role_id);
    if (!role) refuse('default_role_required', 'default_role_not_an_organization_role');
    if (!provider.default_role_set_by) refuse('default_role_required', 'default_role_configurer_unknown');
    const [configurer] = await this.repo.grantsInOrganization(orgId, [provider.default_role_set_by]);
    if (!configurer || configurer.status !== 'active') refuse('default_role_required', 'default_role_configurer_inactive');
    if (!role.permissions.every((permission) => hasPermission(configurer.permissions, permission))) refuse('default_role_required', 'default_role_configurer_no_longer_entitled');
    return { role, configurer };
  }

  /**
   * Issue 16, group-to-role mapping: the provider's mappings, read against the groups claim (OIDC)
   * or attribute (SAML) of this very sign-in, so the role follows the IdP at every sign-in. The
   * first mapping whose group the person is in gives the role and its site restriction; a mapping
   * is re-checked against the administrator who saved it and skipped when they may no longer grant
   * its role. When none applies (a group removed at the IdP), the role falls back to the default
   * role, re-checked as at provisioning; without one (partner providers have none) the sign-in is
   * refused, as the IdP gives this person no role here. Whatever role results must still be
   * covered by the provider's configurer (requireConfigurerCovers, run before on the old role too),
   * so a mapping never signs anyone in beyond what the provider's configurer holds. A refusal
   * rolls the change back with the rest of the sign-in.
   */
  private async applyGroupMappings(provider: LoginProviderRow, userId: string, groups: readonly string[]): Promise<void> {
    const scope = { orgId: provider.org_id, partnerId: provider.org_id ? null : provider.partner_id, providerId: provider.id };
    let applied: AppliedRole = await this.groupRoles.apply(scope, userId, groups, { unmatched: 'report' });
    if (applied.outcome === 'no_mappings') return;
    if (applied.outcome === 'unmatched') {
      if (!provider.org_id) refuse('no_org_access', 'no_group_mapping_applies');
      if (!provider.default_role_id) refuse('default_role_required', 'no_group_mapping_applies_and_no_default_role');
      const { role } = await this.grantableDefaultRole(provider);
      const changed = await this.groupRoles.assignRole(scope, userId, role.id, null);
      applied = { outcome: changed ? 'default' : 'unchanged', roleId: role.id, skipped: applied.skipped };
    }
    if (applied.outcome !== 'unchanged') await this.requireConfigurerCovers(provider, userId);
    if (applied.outcome === 'unchanged' && applied.skipped.length === 0) return;
    await this.audit.record({
      action: 'sso.user.role_mapped',
      ...ownerOf(provider),
      resourceType: 'user',
      resourceId: userId,
      actor: { type: 'system', id: null },
      details: { providerId: provider.id, outcome: applied.outcome, roleId: applied.roleId ?? null, group: applied.group ?? null, skippedGroups: applied.skipped },
    });
  }
}
