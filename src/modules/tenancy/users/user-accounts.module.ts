import { Module } from '@nestjs/common';
import { AccountProvisioningRepository } from './account-provisioning.repository';
import { AccountProvisioningService } from './account-provisioning.service';
import { UserCredentialRepository } from './user-credential.repository';
import { UserCredentialService } from './user-credential.service';

/**
 * The writes to users and memberships that other modules need (auth: credentials; SCIM and
 * sign-in group mapping: provisioning), in a module of their own: TenancyModule imports
 * AuthModule, so those modules reach tenancy's users through this one rather than TenancyModule.
 */
@Module({
  providers: [UserCredentialService, UserCredentialRepository, AccountProvisioningService, AccountProvisioningRepository],
  exports: [UserCredentialService, AccountProvisioningService],
})
export class UserAccountsModule {}
