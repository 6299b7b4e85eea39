import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountProvisioningRepository } from './account-provisioning.repository';
import { AccountProvisioningService } from './account-provisioning.service';
import { PersonAuthorityRepository } from './person-authority.repository';
import { PersonAuthorityService } from './person-authority.service';
import { UserCredentialRepository } from './user-credential.repository';
import { UserCredentialService } from './user-credential.service';
import { UserEntity } from './user.entity';
import { MembershipInvitationEntity } from './membership-invitation.entity';
import { OrganizationMembershipEntity, OrganizationMembershipSiteEntity } from './organization-membership.entity';
import { PartnerMembershipEntity, PartnerMembershipOrgEntity, PartnerMembershipSiteEntity } from './partner-membership.entity';

/**
 * The writes to users and memberships that other modules need (auth: credentials; SCIM and
 * sign-in group mapping: provisioning), in a module of their own: TenancyModule imports
 * AuthModule, so those modules reach tenancy's users through this one rather than TenancyModule.
 */
@Module({
  // The entities of tenancy/users are registered here, the module both TenancyModule and these callers reach.
  imports: [
    TypeOrmModule.forFeature([
      UserEntity,
      OrganizationMembershipEntity,
      OrganizationMembershipSiteEntity,
      PartnerMembershipEntity,
      PartnerMembershipOrgEntity,
      PartnerMembershipSiteEntity,
      MembershipInvitationEntity,
    ]),
  ],
  providers: [UserCredentialService, UserCredentialRepository, AccountProvisioningService, AccountProvisioningRepository, PersonAuthorityService, PersonAuthorityRepository],
  exports: [UserCredentialService, AccountProvisioningService, PersonAuthorityService],
})
export class UserAccountsModule {}
