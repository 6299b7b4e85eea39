import { Module } from '@nestjs/common';
import { DynamicGroupController } from './dynamic-groups/dynamic-group.controller';
import { DynamicGroupRepository } from './dynamic-groups/dynamic-group.repository';
import { DynamicGroupService } from './dynamic-groups/dynamic-group.service';
import { PolicyController } from './policy.controller';
import { PolicyRepository } from './policy.repository';
import { PolicyService } from './policy.service';
import { PolicyResolutionRepository } from './resolution/policy-resolution.repository';
import { PolicyResolutionService } from './resolution/policy-resolution.service';

/** Configuration and patch policies, their assignments, their resolution for a device, and the dynamic device groups they target. */
@Module({
  controllers: [PolicyController, DynamicGroupController],
  providers: [PolicyService, PolicyRepository, DynamicGroupService, DynamicGroupRepository, PolicyResolutionService, PolicyResolutionRepository],
  exports: [PolicyRepository, PolicyResolutionService],
})
export class PoliciesModule {}
