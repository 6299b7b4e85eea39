import { Module } from '@nestjs/common';
import { OrganizationController } from './organizations/organization.controller';
import { OrganizationRepository } from './organizations/organization.repository';
import { OrganizationService } from './organizations/organization.service';

@Module({
  controllers: [OrganizationController],
  providers: [OrganizationService, OrganizationRepository],
})
export class TenancyModule {}
