import { All, Body, Controller, Delete, Get, Header, Headers, HttpCode, Param, Patch, Post, Put, Query, Res, UseFilters, UseInterceptors } from '@nestjs/common';
import type { Response } from 'express';
import { ApiExcludeController } from '@nestjs/swagger';
import { CurrentPrincipal, ScimAuth } from '../../common/decorators/auth.decorator';
import { OneStatement } from '../../common/decorators/one-statement.decorator';
import type { Principal } from '../../common/principal';
import { SCIM_MEDIA_TYPE, ScimError, ScimExceptionFilter } from './scim-error';
import { resourceType, resourceTypes, schema, schemas, serviceProviderConfig } from './scim-schemas';
import { ScimContextService } from './scim-context.service';
import { ScimGroupsService } from './scim-groups.service';
import { ScimUsersService } from './scim-users.service';
import { ScimMetricsInterceptor } from './scim-metrics.interceptor';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function id(value: string): string {
  if (!UUID.test(value)) throw ScimError.notFound();
  return value;
}

/** The resource's version as its ETag (RFC 7644 §3.14). */
function tagged(res: Response, resource: Record<string, unknown>): Record<string, unknown> {
  const version = (resource.meta as Record<string, unknown> | undefined)?.version;
  if (typeof version === 'string') res.setHeader('ETag', version);
  return resource;
}

/** 201 with `Location` equal to `meta.location` (RFC 7644 §3.3). */
function created(res: Response, resource: Record<string, unknown>): Record<string, unknown> {
  const location = (resource.meta as Record<string, unknown> | undefined)?.location;
  if (typeof location === 'string') res.setHeader('Location', location);
  return tagged(res, resource);
}

/**
 * The SCIM 2.0 service provider (RFC 7644) of the connection whose bearer token calls it. Left out
 * of the OpenAPI document on purpose: SCIM describes itself (ServiceProviderConfig, ResourceTypes,
 * Schemas), which is what IdPs read, and answers errors in its own RFC 7644 form rather than the
 * service's error body (docs/identity-lifecycle.md).
 */
@ApiExcludeController()
@UseFilters(ScimExceptionFilter)
@UseInterceptors(ScimMetricsInterceptor)
@Controller('scim/v2')
export class ScimController {
  constructor(
    private readonly users: ScimUsersService,
    private readonly groups: ScimGroupsService,
    private readonly context: ScimContextService,
  ) {}

  @Get('ServiceProviderConfig')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  config(): Record<string, unknown> {
    return serviceProviderConfig(this.context.baseUrl());
  }

  @Get('ResourceTypes')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  resourceTypes(): Record<string, unknown> {
    return resourceTypes(this.context.baseUrl());
  }

  @Get('ResourceTypes/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  resourceType(@Param('id') typeId: string): Record<string, unknown> {
    return resourceType(this.context.baseUrl(), typeId);
  }

  @Get('Schemas')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  schemas(): Record<string, unknown> {
    return schemas(this.context.baseUrl());
  }

  @Get('Schemas/:urn')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  schema(@Param('urn') urn: string): Record<string, unknown> {
    return schema(this.context.baseUrl(), urn);
  }

  @Get('Users')
  @ScimAuth()
  @OneStatement()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  listUsers(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.users.listUsers(p, q);
  }

  @Post('Users')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  async createUser(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Res({ passthrough: true }) res: Response): Promise<Record<string, unknown>> {
    return created(res, await this.users.createUser(p, body));
  }

  @Get('Users/:id')
  @ScimAuth()
  @OneStatement()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  async getUser(@CurrentPrincipal() p: Principal, @Param('id') userId: string, @Query() q: Record<string, unknown>, @Res({ passthrough: true }) res: Response): Promise<Record<string, unknown>> {
    return tagged(res, await this.users.getUser(p, id(userId), q));
  }

  @Put('Users/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  async replaceUser(
    @CurrentPrincipal() p: Principal,
    @Param('id') userId: string,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    return tagged(res, await this.users.replaceUser(p, id(userId), body, ifMatch));
  }

  @Patch('Users/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  async patchUser(
    @CurrentPrincipal() p: Principal,
    @Param('id') userId: string,
    @Body() body: unknown,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    return tagged(res, await this.users.patchUser(p, id(userId), body, ifMatch));
  }

  @Delete('Users/:id')
  @ScimAuth()
  @HttpCode(204)
  deleteUser(@CurrentPrincipal() p: Principal, @Param('id') userId: string, @Headers('if-match') ifMatch: string | undefined): Promise<void> {
    return this.users.deleteUser(p, id(userId), ifMatch);
  }

  @Get('Groups')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  listGroups(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.groups.listGroups(p, q);
  }

  @Post('Groups')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  async createGroup(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Res({ passthrough: true }) res: Response): Promise<Record<string, unknown>> {
    return created(res, await this.groups.createGroup(p, body));
  }

  @Get('Groups/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  async getGroup(@CurrentPrincipal() p: Principal, @Param('id') groupId: string, @Query() q: Record<string, unknown>, @Res({ passthrough: true }) res: Response): Promise<Record<string, unknown>> {
    return tagged(res, await this.groups.getGroup(p, id(groupId), q));
  }

  @Patch('Groups/:id')
  @ScimAuth()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  async patchGroup(
    @CurrentPrincipal() p: Principal,
    @Param('id') groupId: string,
    @Body() body: unknown,
    @Query() q: Record<string, unknown>,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown> | undefined> {
    const group = await this.groups.patchGroup(p, id(groupId), body, q, ifMatch);
    if (group === null) {
      res.status(204);
      return undefined;
    }
    return tagged(res, group);
  }

  @Delete('Groups/:id')
  @ScimAuth()
  @HttpCode(204)
  deleteGroup(@CurrentPrincipal() p: Principal, @Param('id') groupId: string, @Headers('if-match') ifMatch: string | undefined): Promise<void> {
    return this.groups.deleteGroup(p, id(groupId), ifMatch);
  }

  /** RFC 7644 §3.11 and §3.7: `/Me` and `/Bulk` are optional; this service offers neither (ServiceProviderConfig says so). */
  @All(['Me', 'Me/*path', 'Bulk'])
  @ScimAuth()
  notImplemented(): never {
    throw new ScimError(501, 'This service provider does not implement this endpoint');
  }

  /** Anything else under the SCIM base is a SCIM error too, never the service's own 404 body. */
  @All('*path')
  @ScimAuth()
  unknown(): never {
    throw ScimError.notFound('No such SCIM endpoint');
  }
}
