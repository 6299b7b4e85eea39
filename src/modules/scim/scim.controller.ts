import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Put, Query, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { CurrentPrincipal, ScimAuth } from '../../common/decorators/auth.decorator';
import type { Principal } from '../../common/principal';
import { SCIM_MEDIA_TYPE, ScimError, ScimExceptionFilter } from './scim-error';
import { resourceTypes, schemas, serviceProviderConfig } from './scim-schemas';
import { ScimService } from './scim.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function id(value: string): string {
  if (!UUID.test(value)) throw ScimError.notFound();
  return value;
}

/**
 * The SCIM 2.0 service provider (RFC 7644) of the connection whose bearer token calls it. Left out
 * of the OpenAPI document on purpose: SCIM describes itself (ServiceProviderConfig, ResourceTypes,
 * Schemas), which is what IdPs read, and answers errors in its own RFC 7644 form rather than the
 * service's error body (docs/identity-lifecycle.md).
 */
@ApiExcludeController()
@UseFilters(ScimExceptionFilter)
@Controller('scim/v2')
export class ScimController {
  constructor(private readonly scim: ScimService) {}

  @Get('ServiceProviderConfig')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  config(): Record<string, unknown> {
    return serviceProviderConfig();
  }

  @Get('ResourceTypes')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  resourceTypes(): Record<string, unknown> {
    return resourceTypes();
  }

  @Get('Schemas')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  schemas(): Record<string, unknown> {
    return schemas();
  }

  @Get('Users')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  listUsers(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.scim.listUsers(p, q);
  }

  @Post('Users')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  createUser(@CurrentPrincipal() p: Principal, @Body() body: unknown): Promise<Record<string, unknown>> {
    return this.scim.createUser(p, body);
  }

  @Get('Users/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  getUser(@CurrentPrincipal() p: Principal, @Param('id') userId: string, @Query() q: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.scim.getUser(p, id(userId), q);
  }

  @Put('Users/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  replaceUser(@CurrentPrincipal() p: Principal, @Param('id') userId: string, @Body() body: unknown): Promise<Record<string, unknown>> {
    return this.scim.replaceUser(p, id(userId), body);
  }

  @Patch('Users/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  patchUser(@CurrentPrincipal() p: Principal, @Param('id') userId: string, @Body() body: unknown): Promise<Record<string, unknown>> {
    return this.scim.patchUser(p, id(userId), body);
  }

  @Delete('Users/:id')
  @ScimAuth()
  @HttpCode(204)
  deleteUser(@CurrentPrincipal() p: Principal, @Param('id') userId: string): Promise<void> {
    return this.scim.deleteUser(p, id(userId));
  }

  @Get('Groups')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  listGroups(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.scim.listGroups(p, q);
  }

  @Post('Groups')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  createGroup(@CurrentPrincipal() p: Principal, @Body() body: unknown): Promise<Record<string, unknown>> {
    return this.scim.createGroup(p, body);
  }

  @Get('Groups/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  getGroup(@CurrentPrincipal() p: Principal, @Param('id') groupId: string, @Query() q: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.scim.getGroup(p, id(groupId), q);
  }

  @Patch('Groups/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  patchGroup(@CurrentPrincipal() p: Principal, @Param('id') groupId: string, @Body() body: unknown): Promise<Record<string, unknown> | null> {
    return this.scim.patchGroup(p, id(groupId), body);
  }

  @Delete('Groups/:id')
  @ScimAuth()
  @HttpCode(204)
  deleteGroup(@CurrentPrincipal() p: Principal, @Param('id') groupId: string): Promise<void> {
    return this.scim.deleteGroup(p, id(groupId));
  }
}
