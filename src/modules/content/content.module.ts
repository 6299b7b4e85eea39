import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ContactBatchRepository } from './contacts/contact-batch.repository';
import { ContactController } from './contacts/contact.controller';
import { ContactEntity } from './contacts/contact.entity';
import { ContactRepository } from './contacts/contact.repository';
import { ContactService } from './contacts/contact.service';
import { CustomFieldBatchRepository } from './custom-fields/custom-field-batch.repository';
import { CustomFieldController } from './custom-fields/custom-field.controller';
import { CustomFieldEntity } from './custom-fields/custom-field.entity';
import { CustomFieldValueEntity } from './custom-fields/custom-field-value.entity';
import { CustomFieldRepository } from './custom-fields/custom-field.repository';
import { CustomFieldValueService } from './custom-fields/custom-field-value.service';
import { CustomFieldService } from './custom-fields/custom-field.service';
import { DeviceCustomFieldController } from './custom-fields/device-custom-field.controller';
import { ScriptBatchRepository } from './scripts/script-batch.repository';
import { ScriptController } from './scripts/script.controller';
import { ScriptEntity } from './scripts/script.entity';
import { ScriptRepository } from './scripts/script.repository';
import { ScriptService } from './scripts/script.service';

/** Contacts, custom fields and scripts: the content of the tenancy hierarchy (spec 2.10). */
@Module({
  imports: [TypeOrmModule.forFeature([ContactEntity, CustomFieldEntity, CustomFieldValueEntity, ScriptEntity])],
  controllers: [ContactController, CustomFieldController, DeviceCustomFieldController, ScriptController],
  providers: [ContactService, ContactRepository, CustomFieldService, CustomFieldValueService, CustomFieldRepository, ScriptService, ScriptRepository,
    ContactBatchRepository, CustomFieldBatchRepository, ScriptBatchRepository],
  exports: [ContactService, CustomFieldService, ScriptService],
})
export class ContentModule {}
