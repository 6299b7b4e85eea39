import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../tenancy/shared/pagination.dto';
import { ContactListDto, ContactResponseDto, CreateContactDto, ListContactsQueryDto, UpdateContactDto } from './contact.dto';
import { ContactService } from './contact.service';

@ApiTags('contacts')
@Controller('contacts')
export class ContactController {
  constructor(private readonly contacts: ContactService) {}

  @Get()
  @Auth({ permission: 'contacts:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListContactsQueryDto): Promise<ContactListDto> {
    return this.contacts.list(principal, query);
  }

  @Get(':id')
  @Auth({ permission: 'contacts:read' })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<ContactResponseDto> {
    return this.contacts.get(principal, id);
  }

  @Post()
  @Auth({ permission: 'contacts:write', siteScope: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateContactDto): Promise<ContactResponseDto> {
    return this.contacts.create(principal, dto);
  }

  @Patch(':id')
  @Auth({ permission: 'contacts:write', siteScope: true })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateContactDto): Promise<ContactResponseDto> {
    return this.contacts.update(principal, id, dto);
  }

  @Delete(':id')
  @Auth({ permission: 'contacts:write' })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.contacts.delete(principal, id);
  }
}
