import { Module } from '@nestjs/common';
import { ContactController } from './contacts/contact.controller';
import { ContactRepository } from './contacts/contact.repository';
import { ContactService } from './contacts/contact.service';

/** Contacts, custom fields and scripts: the content of the tenancy hierarchy (spec 2.10). */
@Module({
  controllers: [ContactController],
  providers: [ContactService, ContactRepository],
  exports: [],
})
export class ContentModule {}
