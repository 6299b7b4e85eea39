import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module';
import { AuthModule } from '../auth/auth.module';
import { UserAccountsModule } from '../tenancy/users/user-accounts.module';
import { GroupRoleMappingEntity } from './group-role-mapping.entity';
import { GroupRoleApplier } from './group-role.applier';
import { ScimConnectionController } from './scim-connection.controller';
import { ScimConnectionRepository } from './scim-connection.repository';
import { ScimConnectionService } from './scim-connection.service';
import { ScimContextService } from './scim-context.service';
import { ScimGroupRepository } from './scim-group.repository';
import { ScimGroupsService } from './scim-groups.service';
import { ScimUserRepository } from './scim-user.repository';
import { ScimUsersService } from './scim-users.service';
import { ScimController } from './scim.controller';

/** SCIM 2.0 provisioning and deprovisioning, and group-to-role mappings (docs/identity-lifecycle.md). */
@Module({
  imports: [AuthModule, AuditModule, UserAccountsModule, TypeOrmModule.forFeature([GroupRoleMappingEntity])],
  controllers: [ScimConnectionController, ScimController],
  providers: [ScimConnectionRepository, ScimConnectionService, ScimUserRepository, ScimGroupRepository, ScimContextService, ScimUsersService, ScimGroupsService, GroupRoleApplier],
  exports: [GroupRoleApplier],
})
export class ScimModule {}
