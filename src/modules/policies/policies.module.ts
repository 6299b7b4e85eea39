import { Module } from '@nestjs/common';
import { DynamicGroupController } from './dynamic-groups/dynamic-group.controller';
import { DynamicGroupRepository } from './dynamic-groups/dynamic-group.repository';
import { DynamicGroupService } from './dynamic-groups/dynamic-group.service';
import { PolicyController } from './policy.controller';
import { PolicyRepository } from './policy.repository';
import { PolicyService } from './policy.service';

/** Configuration and patch policies, their assignments, and the dynamic device groups they target. */
@Module({
  controllers: [PolicyController, DynamicGroupController],
  providers: [PolicyService, PolicyRepository, DynamicGroupService, DynamicGroupRepository],
  exports: [PolicyRepository],
})
export class PoliciesModule {}
