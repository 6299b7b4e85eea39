import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AuditService } from '../../audit/audit.service';
import { PrincipalCache } from '../../../common/principal-cache';
import type { SuccessDto } from '../../../common/pagination.dto';
import type { InvitationListDto } from './invitation.dto';
import { InvitationErrors } from './invitation.errors';
import type { MembershipInvitationEntity } from './membership-invitation.entity';
import { InvitationRepository } from './invitation.repository';
import { PersonAuthorityService } from './person-authority.service';

/**
 * The invitee's side of an invitation (see UserService.identityFor): an existing identity added
 * by another tenant joins it only when its owner accepts, signed in as themselves. Until then the
 * invitation grants nothing: no membership, no access, no approval requests, no SSO of that tenant.
 */
@Injectable()
export class InvitationService {
  constructor(
    private readonly repo: InvitationRepository,
    private readonly tx: TenantTransactionService,
    private readonly audit: AuditService,
    private readonly principals: PrincipalCache,
    private readonly authority: PersonAuthorityService,
  ) {}

  async list(principal: Principal): Promise<InvitationListDto> {
    const userId = this.invitee(principal);
    const rows = await this.tx.withSystemContext('the invitee reads the names of the tenants that invited them', () => this.repo.forUser(userId));
    return {
      success: true,
      invitations: rows.map((r) => ({
        id: r.id,
        orgId: r.orgId,
        organizationName: r.organizationName,
        partnerId: r.partnerId,
        partnerName: r.partnerName,
        createdAt: r.createdAt.toISOString(),
      })),
    };
  }

  async accept(principal: Principal, id: string): Promise<SuccessDto> {
    const userId = this.invitee(principal);
    await this.tx.withSystemContext("the invitee joins the inviting tenant, whose memberships only it could write", async () => {
      const invitation = await this.repo.lock(id, userId);
      if (!invitation) throw InvitationErrors.notFound();
      await this.requireInviterStillGrants(invitation);
      if (invitation.orgId) {
        await this.repo.acceptOrganization(invitation);
      } else {
        const current = await this.repo.partnerOf(userId);
        if (current) throw InvitationErrors.technicianElsewhere();
        await this.repo.acceptPartner(invitation);
      }
      await this.repo.delete(id, userId);
      await this.audit.record({ action: 'invitation.accept', ...this.owner(invitation), resourceType: 'user', resourceId: userId, details: { invitationId: id, roleId: invitation.roleId } });
    });
    this.principals.forgetUser(userId);
    return { success: true };
  }

  async decline(principal: Principal, id: string): Promise<SuccessDto> {
    const userId = this.invitee(principal);
    await this.tx.withSystemContext('the invitee removes an invitation of another tenant', async () => {
      const invitation = await this.repo.lock(id, userId);
      if (!invitation) throw InvitationErrors.notFound();
      await this.repo.delete(id, userId);
      await this.audit.record({ action: 'invitation.decline', ...this.owner(invitation), resourceType: 'user', resourceId: userId, details: { invitationId: id } });
    });
    return { success: true };
  }

  /**
   * An invitation hands out what its inviter could grant when they sent it; it is applied now, so
   * the rule of acting on a person is asked again at acceptance: the inviter must still be able to
   * grant the role on those sites (and, for a technician, those organizations) in the tenant.
   */
  private async requireInviterStillGrants(i: MembershipInvitationEntity): Promise<void> {
    const role = await this.repo.rolePermissions(i.roleId);
    const tenant = i.orgId ? { orgId: i.orgId } : { partnerId: i.partnerId as string };
    const grantable = role !== null && (await this.authority.mayActOn(i.invitedBy, i.userId, { kind: 'grant', tenant, permissions: role, siteIds: i.siteIds }));
    const orgsReached = grantable && (i.orgId !== null || (await this.repo.inviterReachesOrganizations(i.invitedBy as string, i.partnerId as string, i.orgAccess === 'all' ? null : (i.orgIds ?? []))));
    if (!orgsReached) throw InvitationErrors.inviterNoLongerEntitled();
  }

  /** Only the person themselves answers an invitation: never an API key acting for them. */
  private invitee(principal: Principal): string {
    if (principal.kind !== 'user' || !principal.userId) throw InvitationErrors.userRequired();
    return principal.userId;
  }

  private owner(i: MembershipInvitationEntity): { orgId?: string; partnerId?: string } {
    return i.orgId ? { orgId: i.orgId } : { partnerId: i.partnerId as string };
  }
}
