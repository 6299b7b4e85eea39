import { Module } from '@nestjs/common';
import { ContactController } from './contacts/contact.controller';
import { ContactRepository } from './contacts/contact.repository';
import { ContactService } from './contacts/contact.service';
import { CustomFieldController } from './custom-fields/custom-field.controller';
import { CustomFieldRepository } from './custom-fields/custom-field.repository';
import { CustomFieldValueService } from './custom-fields/custom-field-value.service';
import { CustomFieldService } from './custom-fields/custom-field.service';
import { DeviceCustomFieldController } from './custom-fields/device-custom-field.controller';
import { ScriptController } from './scripts/script.controller';
import { ScriptRepository } from './scripts/script.repository';
import { ScriptService } from './scripts/script.service';

/** Contacts, custom fields and scripts: the content of the tenancy hierarchy (spec 2.10). */
@Module({
  controllers: [ContactController, CustomFieldController, DeviceCustomFieldController, ScriptController],
  providers: [ContactService, ContactRepository, CustomFieldService, CustomFieldValueService, CustomFieldRepository, ScriptService, ScriptRepository],
  exports: [],
})
export class ContentModule {}
