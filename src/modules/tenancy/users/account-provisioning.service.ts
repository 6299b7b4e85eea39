import { Injectable } from '@nestjs/common';
import { AccountProvisioningRepository, type DeprovisionCounts, type MembershipScope } from './account-provisioning.repository';

export type { DeprovisionCounts };

/**
 * Writes accounts and memberships for provisioning callers (SCIM, the group-to-role mapping of
 * SCIM and sign-in), in the caller's transaction. The caller decides what to write and audits it;
 * tenancy alone writes the rows.
 */
@Injectable()
export class AccountProvisioningService {
  constructor(private readonly repo: AccountProvisioningRepository) {}

  /** A new account, or null when the address is taken (by an account this tenant may not see). */
  createUser(email: string, name: string): Promise<string | null> {
    return this.repo.createUser(email, name);
  }

  /** An active account without a password; a taken address fails with PostgreSQL's unique violation. */
  createActiveUser(email: string, name: string): Promise<string> {
    return this.repo.createActiveUser(email, name);
  }

  /** A technician of every organization of the partner. */
  addPartnerMember(partnerId: string, userId: string, roleId: string): Promise<void> {
    return this.repo.addPartnerMember(partnerId, userId, roleId);
  }

  updateProfile(userId: string, email: string, name: string): Promise<number> {
    return this.repo.updateProfile(userId, email, name);
  }

  addOrgMember(orgId: string, userId: string, roleId: string): Promise<number> {
    return this.repo.addOrgMember(orgId, userId, roleId);
  }

  /** Sign-in restored, nothing else: the membership counts again (with a connection: only a suspension it made). */
  reactivate(scope: MembershipScope, userId: string, connectionId: string | null = null): Promise<number> {
    return this.repo.reactivate(scope, userId, connectionId);
  }

  /** The SCIM connection behind a suspension in force (null: none recorded); undefined when not suspended. */
  suspendedBy(scope: MembershipScope, userId: string): Promise<string | null | undefined> {
    return this.repo.suspendedBy(scope, userId);
  }

  recordSuspendingConnection(scope: MembershipScope, userId: string, connectionId: string): Promise<number> {
    return this.repo.recordSuspendingConnection(scope, userId, connectionId);
  }

  /** The account's name alone. */
  updateName(userId: string, name: string): Promise<number> {
    return this.repo.updateName(userId, name);
  }

  suspend(scope: MembershipScope, userId: string): Promise<number> {
    return this.repo.suspend(scope, userId);
  }

  /**
   * Deprovisioning, immediate and total, in one statement: the membership is suspended and
   * everything that gave the person access in its scope ends (sessions, refresh tokens, API keys
   * they created, pending requests they filed, elevations they approved still in their window).
   * Sees every session and key of the scope: the caller runs it in system context.
   */
  deprovision(scope: MembershipScope, userId: string, reason: string): Promise<DeprovisionCounts | null> {
    return this.repo.deprovision(scope, userId, reason);
  }

  /**
   * Gives the membership this role and site restriction (null: every site; partner memberships
   * have none); true when something changed.
   */
  async assignRole(scope: MembershipScope, userId: string, roleId: string, siteIds: string[] | null): Promise<boolean> {
    if (!scope.orgId) return (await this.repo.setPartnerRole(scope.partnerId as string, userId, roleId)) > 0;
    const changed = await this.repo.setOrgRole(scope.orgId, userId, roleId, siteIds !== null);
    const current = (await this.repo.orgSites(scope.orgId, userId)).join(',');
    const target = [...(siteIds ?? [])].sort().join(',');
    if (current === target) return changed > 0;
    await this.repo.replaceOrgSites(scope.orgId, userId, siteIds ?? []);
    return true;
  }
}
