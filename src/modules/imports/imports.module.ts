import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { JobsModule } from '../../infra/jobs/jobs.module';
import { ContentModule } from '../content/content.module';
import { PoliciesModule } from '../policies/policies.module';
import { TenancyModule } from '../tenancy/tenancy.module';
import { ImportBodyMiddleware } from './import-body.middleware';
import { ImportLinkRepository } from './import-link.repository';
import { ImportController } from './import.controller';
import { ImportJob } from './import.job';
import { ImportRepository } from './import.repository';
import { ImportService } from './import.service';
import { ContactsPhase } from './phases/contacts.phase';
import { CustomFieldValuesPhase } from './phases/custom-field-values.phase';
import { CustomFieldsPhase } from './phases/custom-fields.phase';
import { DeviceGroupsPhase } from './phases/device-groups.phase';
import { DevicesPhase } from './phases/devices.phase';
import { OrganizationsPhase } from './phases/organizations.phase';
import { PoliciesPhase } from './phases/policies.phase';
import { ScriptsPhase } from './phases/scripts.phase';

/** Migration from another RMM: interchange documents and CSV files, run as background jobs. */
@Module({
  imports: [JobsModule, TenancyModule, ContentModule, PoliciesModule],
  controllers: [ImportController],
  providers: [
    ImportService,
    ImportJob,
    ImportRepository,
    ImportLinkRepository,
    OrganizationsPhase,
    CustomFieldsPhase,
    DevicesPhase,
    ContactsPhase,
    CustomFieldValuesPhase,
    DeviceGroupsPhase,
    ScriptsPhase,
    PoliciesPhase,
  ],
  exports: [ImportJob],
})
export class ImportsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(ImportBodyMiddleware).forRoutes({ path: 'imports', method: RequestMethod.POST });
  }
}
