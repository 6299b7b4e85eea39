import { UserAccountsModule } from './users/user-accounts.module';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeviceGroupController } from './device-groups/device-group.controller';
import { DeviceGroupMemberEntity } from './device-groups/device-group-member.entity';
import { DeviceGroupEntity } from './device-groups/device-group.entity';
import { DeviceGroupRepository } from './device-groups/device-group.repository';
import { DeviceGroupService } from './device-groups/device-group.service';
import { DynamicDeviceGroupRepository } from './device-groups/dynamic-device-group.repository';
import { DeviceBatchRepository } from './devices/device-batch.repository';
import { AgentEntity } from './devices/agent.entity';
import { AgentPresenceModule } from './devices/agent-presence.module';
import { DeviceController } from './devices/device.controller';
import { DeviceEntity } from './devices/device.entity';
import { DeviceRepository } from './devices/device.repository';
import { DeviceService } from './devices/device.service';
import { PartnerEntity } from './partners/partner.entity';
import { PartnerRepository } from './partners/partner.repository';
import { PartnerService } from './partners/partner.service';
import { OrganizationBatchRepository } from './organizations/organization-batch.repository';
import { OrganizationController } from './organizations/organization.controller';
import { OrganizationEntity } from './organizations/organization.entity';
import { OrganizationRepository } from './organizations/organization.repository';
import { OrganizationService } from './organizations/organization.service';
import { RoleController } from './roles/role.controller';
import { RoleEntity } from './roles/role.entity';
import { RoleRepository } from './roles/role.repository';
import { RoleService } from './roles/role.service';
import { SiteBatchRepository } from './sites/site-batch.repository';
import { SiteController } from './sites/site.controller';
import { SiteEntity } from './sites/site.entity';
import { SiteRepository } from './sites/site.repository';
import { SiteService } from './sites/site.service';
import { InvitationController } from './users/invitation.controller';
import { InvitationRepository } from './users/invitation.repository';
import { InvitationService } from './users/invitation.service';
import { MembershipGrantService } from './users/membership-grant.service';
import { MembershipService } from './users/membership.service';
import { PartnerMembershipController } from './users/partner-membership.controller';
import { UserController } from './users/user.controller';
import { UserRepository } from './users/user.repository';
import { UserService } from './users/user.service';

@Module({
  imports: [UserAccountsModule, AgentPresenceModule, TypeOrmModule.forFeature([OrganizationEntity, RoleEntity, SiteEntity, DeviceEntity, AgentEntity, DeviceGroupEntity, DeviceGroupMemberEntity, PartnerEntity])],
  controllers: [OrganizationController, SiteController, DeviceGroupController, DeviceController, RoleController, UserController, PartnerMembershipController, InvitationController],
  providers: [
    OrganizationService,
    OrganizationRepository,
    SiteService,
    SiteRepository,
    DeviceGroupService,
    DeviceGroupRepository,
    DeviceService,
    DeviceRepository,
    RoleService,
    RoleRepository,
    UserService,
    UserRepository,
    MembershipService,
    MembershipGrantService,
    InvitationService,
    InvitationRepository,
    OrganizationBatchRepository,
    SiteBatchRepository,
    DeviceBatchRepository,
    DynamicDeviceGroupRepository,
    PartnerService,
    PartnerRepository,
  ],
  // AgentPresenceModule re-exported: the global AuthGuard (an AppModule provider) reaches AgentPresenceSink through it.
  exports: [OrganizationService, SiteService, DeviceService, DeviceGroupService, PartnerService, RoleService, AgentPresenceModule],
})
export class TenancyModule {}
