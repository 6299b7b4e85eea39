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
import { ScimUserRepository } from './scim-user.repository';
import { ScimController } from './scim.controller';
import { ScimService } from './scim.service';

/** SCIM 2.0 provisioning and deprovisioning, and group-to-role mappings (docs/identity-lifecycle.md). */
@Module({
  imports: [AuthModule, AuditModule, UserAccountsModule, TypeOrmModule.forFeature([GroupRoleMappingEntity])],
  controllers: [ScimConnectionController, ScimController],
  providers: [ScimConnectionRepository, ScimConnectionService, ScimUserRepository, ScimService, GroupRoleApplier],
  exports: [GroupRoleApplier],
})
export class ScimModule {}
