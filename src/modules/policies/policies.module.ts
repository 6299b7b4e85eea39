import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DynamicGroupController } from './dynamic-groups/dynamic-group.controller';
import { DynamicGroupRepository } from './dynamic-groups/dynamic-group.repository';
import { DynamicGroupService } from './dynamic-groups/dynamic-group.service';
import { TenancyModule } from '../tenancy/tenancy.module';
import { PolicyBatchRepository } from './policy-batch.repository';
import { PolicyController } from './policy.controller';
import { PolicyAssignmentEntity, PolicyEntity } from './policy.entity';
import { PolicyRepository } from './policy.repository';
import { PolicyService } from './policy.service';
import { PolicyResolutionRepository } from './resolution/policy-resolution.repository';
import { PolicyResolutionService } from './resolution/policy-resolution.service';

/** Configuration and patch policies, their assignments, their resolution for a device, and the dynamic device groups they target. */
@Module({
  imports: [TenancyModule, TypeOrmModule.forFeature([PolicyEntity, PolicyAssignmentEntity])],
  controllers: [PolicyController, DynamicGroupController],
  providers: [PolicyService, PolicyRepository, DynamicGroupService, DynamicGroupRepository, PolicyResolutionService, PolicyResolutionRepository, PolicyBatchRepository],
  exports: [PolicyResolutionService, PolicyService],
})
export class PoliciesModule {}
