import { Module } from '@nestjs/common';
import { JobsModule } from '../../infra/jobs/jobs.module';
import { AuthModule } from '../auth/auth.module';
import { ContentModule } from '../content/content.module';
import { PoliciesModule } from '../policies/policies.module';
import { TenancyModule } from '../tenancy/tenancy.module';
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

/**
 * Migration from another RMM: interchange documents and CSV files, run as background jobs. The
 * body of POST /imports is read by readImportBody, mounted by src/app.setup.ts before the
 * application's JSON parser.
 */
@Module({
  imports: [JobsModule, AuthModule, TenancyModule, ContentModule, PoliciesModule],
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
export class ImportsModule {}
