import type { INestApplication } from '@nestjs/common';
import { ParseUUIDPipe } from '@nestjs/common';
import { PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { API_ERRORS_META, type ApiErrorCodes } from '../decorators/api-errors.decorator';
import { AUTH_META, type AuthMeta } from '../decorators/auth.decorator';
import { ERROR_BODY_SCHEMA } from '../errors/error-body.schema';
import { addSharedResponses, documentErrors, type RouteFacts } from './error-responses';
import { validationSchemas, type SchemaPart } from './validation-schema';

type Json = Record<string, unknown>;
/** The shape src/metadata.ts (scripts/generate-openapi-metadata.js) exports. */
export type PluginMetadata = () => Promise<Record<string, unknown>>;
type Models = [Promise<Record<string, unknown>>, Record<string, Record<string, Json>>][];

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;
const SUCCESS_TEXT: Record<string, string> = { '200': 'OK.', '201': 'Created.', '202': 'Accepted: the work continues in the background.', '204': 'No content.' };

/**
 * Merges into the plugin's metadata of each DTO property what its TypeScript type says (typeSchemas:
 * enumerations of literal unions, records, interfaces, format aliases) and, over that, what its
 * class-validator decorators check (enumerations, formats, integer, bounds, patterns): the schema
 * of a request field is what the server accepts. An explicit @ApiProperty still has the last word
 * (the plugin's metadata never overrides a decorator).
 */
async function enrichedMetadata(metadata: PluginMetadata): Promise<Record<string, unknown>> {
  const all = await metadata();
  const models = ((all['@nestjs/swagger'] as { models?: Models } | undefined)?.models ?? []) as Models;
  const typed = new Map<unknown, Record<string, Record<string, SchemaPart>>>();
  for (const [file, classes] of ((all.typeSchemas as { models?: Models } | undefined)?.models ?? []) as Models) {
    typed.set(await file, classes as Record<string, Record<string, SchemaPart>>);
  }
  for (const [file, classes] of models) {
    const mod = await file;
    for (const [className, properties] of Object.entries(classes)) {
      const cls = mod[className];
      const validated = typeof cls === 'function' ? validationSchemas(cls) : {};
      const fromTypes = typed.get(mod)?.[className] ?? {};
      for (const [name, property] of Object.entries(properties)) mergeProperty(property, fromTypes[name], validated[name]);
    }
  }
  return all;
}

function mergeProperty(property: Json, ...parts: (SchemaPart | undefined)[]): void {
  const required = property.required;
  for (const part of parts) {
    if (!part) continue;
    for (const [key, value] of Object.entries(part)) {
      const current = property[key];
      property[key] = key === 'items' && current && typeof current === 'object' ? { ...(current as Json), ...(value as Json) } : value;
    }
  }
  // An inline object's own `required` list replaces the property's flag: keep the flag as swagger's selfRequired.
  if (Array.isArray(property.required)) property.selfRequired = required;
  // A nullable enumeration lists null among its values (OpenAPI 3.0).
  for (const s of [property, property.items as Json | undefined]) {
    if (s && s.nullable === true && Array.isArray(s.enum) && !s.enum.includes(null)) s.enum = [...s.enum, null];
  }
}

/** The handler behind each operationId (swagger's default: `Controller_method`), with what the document needs from it. */
function routeFacts(app: INestApplication): Map<string, RouteFacts> {
  const facts = new Map<string, RouteFacts>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const cls = wrapper.metatype as Function | undefined;
      if (!cls?.prototype) continue;
      for (const method of Object.getOwnPropertyNames(cls.prototype)) {
        const handler = method === 'constructor' ? undefined : Object.getOwnPropertyDescriptor(cls.prototype, method)?.value;
        if (typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const key = `${cls.name}_${method}`;
        if (facts.has(key)) throw new Error(`OpenAPI: two controllers named ${cls.name} declare ${method}`);
        const declared: Record<number, string[]> = {};
        for (const source of [Reflect.getMetadata(API_ERRORS_META, cls), Reflect.getMetadata(API_ERRORS_META, handler)] as (ApiErrorCodes | undefined)[]) {
          for (const [status, codes] of Object.entries(source ?? {})) declared[Number(status)] = [...new Set([...(declared[Number(status)] ?? []), ...(codes ?? [])])];
        }
        const throttled = [handler, cls].some((target) => Reflect.getMetadataKeys(target).some((k) => typeof k === 'string' && k.startsWith('THROTTLER:LIMIT')));
        facts.set(key, { auth: Reflect.getMetadata(AUTH_META, handler) ?? Reflect.getMetadata(AUTH_META, cls), throttled, declared, uuidParams: uuidParams(cls, method) });
      }
    }
  }
  return facts;
}

/** The path and query parameters a handler reads through ParseUUIDPipe (UuidParam, UuidQuery). */
function uuidParams(cls: Function, method: string): RouteFacts['uuidParams'] {
  const args: Record<string, { data?: unknown; pipes?: unknown[] }> = Reflect.getMetadata(ROUTE_ARGS_METADATA, cls, method) ?? {};
  const out: RouteFacts['uuidParams'] = { path: [], query: [] };
  for (const [key, arg] of Object.entries(args)) {
    const kind = Number(key.split(':')[0]);
    if (typeof arg.data !== 'string' || !arg.pipes?.some((p) => p instanceof ParseUUIDPipe)) continue;
    if (kind === RouteParamtypes.PARAM) out.path.push(arg.data);
    if (kind === RouteParamtypes.QUERY) out.query.push(arg.data);
  }
  return out;
}

/**
 * The served OpenAPI document: schemas from the DTOs' types and validators, and for every
 * operation its security, its success answers and every error status with its codes and the
 * `ErrorBody` schema. Built once at start-up.
 */
export async function buildOpenApiDocument(app: INestApplication, metadata: PluginMetadata): Promise<OpenAPIObject> {
  await SwaggerModule.loadPluginMetadata(async () => enrichedMetadata(metadata));
  const config = new DocumentBuilder()
    .setTitle('RMM identity and privileged access API')
    .setDescription(
      'SSO (OIDC, SAML), login branding, tenancy administration and privileged-access elevation. ' +
        'Every error has the body `ErrorBody`; each operation lists its error statuses and their `code`s. ' +
        'Authenticate with a bearer JWT (from /auth/login or /sso/exchange), an API key (`Bearer sk_…`), ' +
        'or, for agent routes, the agent token issued at enrolment.',
    )
    .setVersion('1')
    .addServer('/', 'This service')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Access token of a session: 15 minutes.' }, 'bearer')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'sk_…', description: 'API key: `sk_` and random characters.' }, 'apiKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque', description: 'Agent token issued at enrolment (POST /devices/{id}/enroll).' }, 'agent')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ErrorBody: ERROR_BODY_SCHEMA } };
  addSharedResponses(document);

  const facts = routeFacts(app);
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const route = op.operationId ? facts.get(op.operationId) : undefined;
      if (!route) throw new Error(`OpenAPI: no handler found for operation ${op.operationId}`);
      if (route.auth?.kind === 'public') op.security = [];
      for (const param of op.parameters ?? []) {
        if (!('in' in param)) continue;
        const ids = param.in === 'path' ? route.uuidParams.path : param.in === 'query' ? route.uuidParams.query : [];
        if (ids.includes(param.name)) param.schema = { ...param.schema, type: 'string', format: 'uuid' };
      }
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        // The plugin repeats the operation's description on its success answer: say what the status means instead.
        if (response && 'description' in response && response.description === op.description && SUCCESS_TEXT[status]) response.description = SUCCESS_TEXT[status];
      }
      documentErrors(method, op as never, route);
    }
  }
  dropUnusedSchemas(document);
  return document;
}

/** Schemas nothing refers to (the empty `Object` the plugin emits for an untyped value). */
function dropUnusedSchemas(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  for (;;) {
    const text = JSON.stringify({ ...document, components: { ...document.components, schemas: {} } }) + JSON.stringify(schemas);
    const unused = Object.keys(schemas).filter((name) => name !== 'ErrorBody' && !text.includes(`"#/components/schemas/${name}"`));
    if (unused.length === 0) return;
    for (const name of unused) delete schemas[name];
  }
}
