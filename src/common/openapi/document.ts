import type { INestApplication } from '@nestjs/common';
import { ParseUUIDPipe } from '@nestjs/common';
import { PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { API_BODY_CONTENT_META, API_ERRORS_META, type ApiErrorCodes } from '../decorators/api-errors.decorator';
import { AUTH_META, type AuthMeta } from '../decorators/auth.decorator';
import { ERROR_BODY_SCHEMA } from '../errors/error-body.schema';
import { addSharedResponses, documentErrors, sharedCodesMarkdown, type RouteFacts } from './error-responses';
import { validationSchemas, type SchemaPart } from './validation-schema';

type Json = Record<string, unknown>;
/** The shape src/metadata.ts (scripts/generate-openapi-metadata.js) exports. */
export type PluginMetadata = () => Promise<Record<string, unknown>>;
type Models = [Promise<Record<string, unknown>>, Record<string, Record<string, Json>>][];

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;
const SUCCESS_TEXT: Record<string, string> = { '200': 'OK.', '201': 'Created.', '202': 'Accepted: the work continues in the background.', '204': 'No content.' };

/**
 * The operations that never reach the database: the health probes (liveness answers from the
 * process alone; readiness asks the database itself and reports a failure as `not_ready`). Every
 * other operation can answer 503 `database_unavailable` with Retry-After.
 */
const WITHOUT_DATABASE = new Set(['HealthController_live', 'HealthController_ready']);

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
      for (const [method, handler] of routeHandlers(cls)) {
        const key = `${cls.name}_${method}`;
        if (facts.has(key)) throw new Error(`OpenAPI: two controllers named ${cls.name} declare ${method}`);
        const declared: Record<number, string[]> = {};
        for (const source of [Reflect.getMetadata(API_ERRORS_META, cls), Reflect.getMetadata(API_ERRORS_META, handler)] as (ApiErrorCodes | undefined)[]) {
          for (const [status, codes] of Object.entries(source ?? {})) declared[Number(status)] = [...new Set([...(declared[Number(status)] ?? []), ...(codes ?? [])])];
        }
        const bodyContent = Reflect.getMetadata(API_BODY_CONTENT_META, handler) as RouteFacts['bodyContent'];
        const throttled = [handler, cls].some((target) => Reflect.getMetadataKeys(target).some((k) => typeof k === 'string' && k.startsWith('THROTTLER:LIMIT')));
        facts.set(key, {
          auth: Reflect.getMetadata(AUTH_META, handler) ?? Reflect.getMetadata(AUTH_META, cls),
          throttled,
          declared,
          ...argumentFacts(cls, method),
          bodyContent,
          reachesDatabase: !WITHOUT_DATABASE.has(key),
        });
      }
    }
  }
  // A renamed probe must not silently gain the 503 it cannot answer.
  for (const key of WITHOUT_DATABASE) if (!facts.has(key)) throw new Error(`OpenAPI: no handler ${key} (WITHOUT_DATABASE names one)`);
  return facts;
}

/**
 * The route handlers of a controller, its own and those it inherits (Nest routes both; the
 * SSO start routes are inherited), each once: a method the controller overrides is its own.
 */
function routeHandlers(cls: Function): [string, Function][] {
  const found = new Map<string, Function>();
  for (let proto = cls.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const method of Object.getOwnPropertyNames(proto)) {
      const handler = method === 'constructor' ? undefined : Object.getOwnPropertyDescriptor(proto, method)?.value;
      if (found.has(method) || typeof handler !== 'function') continue;
      found.set(method, handler);
    }
  }
  return [...found].filter(([, handler]) => Reflect.getMetadata(PATH_METADATA, handler) !== undefined);
}

/**
 * What a handler's arguments say: the path and query parameters it reads through ParseUUIDPipe
 * (UuidParam, UuidQuery), and whether the validation pipe checks its body and query (a DTO class;
 * a bare value or an interface is passed through unchecked).
 */
function argumentFacts(cls: Function, method: string): Pick<RouteFacts, 'uuidParams' | 'validates'> {
  const args: Record<string, { index: number; data?: unknown; pipes?: unknown[] }> = Reflect.getMetadata(ROUTE_ARGS_METADATA, cls, method) ?? {};
  const types: unknown[] = Reflect.getMetadata('design:paramtypes', cls.prototype, method) ?? [];
  const out: Pick<RouteFacts, 'uuidParams' | 'validates'> = { uuidParams: { path: [], query: [] }, validates: { body: false, query: false } };
  for (const [key, arg] of Object.entries(args)) {
    const kind = Number(key.split(':')[0]);
    const uuid = typeof arg.data === 'string' && !!arg.pipes?.some((p) => p instanceof ParseUUIDPipe);
    const dto = arg.data === undefined && typeof types[arg.index] === 'function' && ![Object, String, Number, Boolean, Array].includes(types[arg.index] as never);
    if (kind === RouteParamtypes.PARAM && uuid) out.uuidParams.path.push(arg.data as string);
    if (kind === RouteParamtypes.QUERY && uuid) out.uuidParams.query.push(arg.data as string);
    if (kind === RouteParamtypes.QUERY && (uuid || dto)) out.validates.query = true;
    if (kind === RouteParamtypes.BODY && dto) out.validates.body = true;
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
        'Authenticate with a bearer JWT (from /auth/login or /sso/exchange), an API key (`Bearer sk_…`), ' +
        'or, for agent routes, the agent token issued at enrolment.\n\n' +
        'Every error has the body `ErrorBody`; each operation lists its error statuses and, for each, the `code`s it answers ' +
        '(program against `code`; `error` is a sentence for people). The codes shared by many routes:\n\n' +
        sharedCodesMarkdown() +
        '\n\nThe other codes are explained in the operation that answers them.',
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
      if (route.bodyContent) {
        route.validates.body = true;
        const { description, content, schemas } = route.bodyContent;
        document.components = { ...document.components, schemas: { ...document.components?.schemas, ...schemas } };
        op.requestBody = { required: true, description, content: Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema }])) };
      }
      for (const param of op.parameters ?? []) {
        if (!('in' in param)) continue;
        const ids = param.in === 'path' ? route.uuidParams.path : param.in === 'query' ? route.uuidParams.query : [];
        if (ids.includes(param.name)) param.schema = { ...param.schema, type: 'string', format: 'uuid' };
      }
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        // The plugin repeats the operation's description on its success answer: say what the status means instead.
        if (response && 'description' in response && response.description === op.description && SUCCESS_TEXT[status]) response.description = SUCCESS_TEXT[status];
      }
      documentErrors(method, op as never, route, bodyRefersToIds(document, op.requestBody));
    }
  }
  dropUnusedSchemas(document);
  return document;
}

/** Whether a JSON request body has a top-level property that is an id (`format: uuid`, or a list of them). */
function bodyRefersToIds(document: OpenAPIObject, body: unknown): boolean {
  const content = (body as { content?: Record<string, { schema?: Json }> } | undefined)?.content ?? {};
  const resolve = (s: Json | undefined): Json | undefined => {
    const ref = s?.$ref;
    return typeof ref === 'string' ? (document.components?.schemas?.[ref.replace('#/components/schemas/', '')] as Json | undefined) : s;
  };
  return Object.entries(content).some(([type, media]) => {
    if (!type.endsWith('json')) return false;
    const properties = (resolve(media.schema)?.properties ?? {}) as Record<string, Json>;
    return Object.values(properties).some((p) => p.format === 'uuid' || (p.items as Json | undefined)?.format === 'uuid');
  });
}

/** Drops the schemas nothing refers to (the empty `Object` the plugin emits for an untyped value). */
function dropUnusedSchemas(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>;
  const used = new Set<string>(['ErrorBody']);
  const pending: unknown[] = [document.paths, document.components?.responses];
  const prefix = '#/components/schemas/';
  while (pending.length) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(prefix)) {
        const name = value.slice(prefix.length);
        if (!used.has(name)) {
          used.add(name);
          pending.push(schemas[name]);
        }
      } else if (typeof value === 'object') pending.push(value);
    }
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
}
