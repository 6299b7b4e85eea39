import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '../../../common/decorators/auth.decorator';
import { UuidParam } from '../../../common/pipes/uuid.pipe';
import type { Principal } from '../../../common/principal';
import { SuccessDto } from '../../../common/pagination.dto';
import { ContactListDto, ContactResponseDto, CreateContactDto, ListContactsQueryDto, UpdateContactDto } from './contact.dto';
import { ContactService } from './contact.service';
import { ApiErrors } from '../../../common/decorators/api-errors.decorator';

@ApiTags('contacts')
@Controller('contacts')
export class ContactController {
  constructor(private readonly contacts: ContactService) {}

  /**
   * Lists and searches contacts, a page at a time.
   *
   * @remarks Needs `contacts:read`. `q` searches name, email and title; `externalId` finds an imported contact. A
   * site-restricted caller sees organization-level contacts and those of their sites.
   */
  @Get()
  @Auth({ permission: 'contacts:read', siteScope: true })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListContactsQueryDto): Promise<ContactListDto> {
    return this.contacts.list(principal, query);
  }

  /**
   * Reads one contact.
   *
   * @remarks Needs `contacts:read`. 404 for a contact outside the caller's reach.
   */
  @Get(':id')
  @Auth({ permission: 'contacts:read' })
  get(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<ContactResponseDto> {
    return this.contacts.get(principal, id);
  }

  /**
   * Creates a contact, at organization level or pinned to a site.
   *
   * @remarks Needs `contacts:write`. 409 `external_id_taken` for an `externalId` the organization already uses.
   */
  @Post()
  @Auth({ permission: 'contacts:write', siteScope: true })
  @ApiErrors({ 400: ['site_not_in_organization'], 409: ['external_id_taken'] })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateContactDto): Promise<ContactResponseDto> {
    return this.contacts.create(principal, dto);
  }

  /**
   * Changes a contact; `null` clears an optional field.
   *
   * @remarks Needs `contacts:write`. A site-restricted caller changes only contacts of their sites (403
   * `site_access_denied`).
   */
  @Patch(':id')
  @Auth({ permission: 'contacts:write', siteScope: true })
  @ApiErrors({ 400: ['site_not_in_organization'], 403: ['site_access_denied'], 409: ['external_id_taken'] })
  update(@CurrentPrincipal() principal: Principal, @UuidParam() id: string, @Body() dto: UpdateContactDto): Promise<ContactResponseDto> {
    return this.contacts.update(principal, id, dto);
  }

  /**
   * Deletes a contact.
   *
   * @remarks Needs `contacts:write`.
   */
  @Delete(':id')
  @Auth({ permission: 'contacts:write' })
  delete(@CurrentPrincipal() principal: Principal, @UuidParam() id: string): Promise<SuccessDto> {
    return this.contacts.delete(principal, id);
  }
}
