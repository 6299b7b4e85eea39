import type { OpenAPIObject } from '@nestjs/swagger';
import type { AuthMeta } from '../decorators/auth.decorator';
import type { ApiErrorCodes } from '../decorators/api-errors.decorator';

type Json = Record<string, unknown>;

/** What the document needs to know about the handler behind an operation. */
export interface RouteFacts {
  auth: AuthMeta | undefined;
  /** The route declares a rate limit (@Throttle). */
  throttled: boolean;
  /** Codes the route declares with @ApiErrors (its controller's and its own). */
  declared: ApiErrorCodes;
  /** Path and query parameters read through a UUID pipe (a path id that is not one: 400 `invalid_id`). */
  uuidParams: { path: string[]; query: string[] };
  /** The handler validates its body (a DTO class, or a document it checks itself) and its query (a DTO, or a UUID pipe). */
  validates: { body: boolean; query: boolean };
  /** The route can reach the database (every route but the health probes): 503 `database_unavailable` with Retry-After. */
  reachesDatabase: boolean;
  /** A body whose schema depends on its media type (@ApiBodyContent). */
  bodyContent?: { description: string; content: Record<string, Record<string, unknown>>; schemas: Record<string, Record<string, unknown>> };
}

const ERROR_BODY_REF = '#/components/schemas/ErrorBody';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthenticated',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Service unavailable',
};

/** The codes every route shares, with what each means (docs/api-conventions.md). */
const MEANING: Record<string, string> = {
  validation_failed: 'the body or query does not validate; `details` names each field',
  invalid_json: 'the body is not valid JSON',
  invalid_body: 'the body could not be read, or does not decode as its `Content-Encoding` says',
  invalid_id: 'a path id is not a UUID',
  invalid_input: 'a value the database cannot take (a NUL character, a number out of range)',
  unauthenticated: 'no credential, or one that is unknown, expired or revoked',
  forbidden: 'the caller lacks the permission (`permission` names it)',
  mfa_required: 'the route needs an MFA-satisfied session or key',
  partner_scope_required: 'the route needs a partner-scope session',
  site_access_denied: 'a site named or written is outside the caller\u2019s sites',
  not_found: 'the object does not exist or is outside the caller\u2019s reach (the two are never told apart)',
  conflict: 'a concurrent change (retry) or a value already taken',
  payload_too_large: 'the body is over the route\u2019s limit',
  unsupported_media_type: 'the body\u2019s `Content-Type` is not one the route reads, or is missing',
  rate_limited: 'a rate limit is spent; wait `Retry-After` seconds (also `retryAfter` in the body)',
  internal_error: 'an unexpected failure; the body carries only the request id',
  database_unavailable:
    'the database cannot serve the request right now (unreachable, restarting, out of connections, or too slow); nothing was wrong with the request: send it again after `Retry-After` seconds (also `retryAfter` in the body)',
};

/** The codes every route shares and what each means, for the document's description (each response lists its codes). */
export function sharedCodesMarkdown(): string {
  return Object.entries(MEANING)
    .map(([code, meaning]) => `- \`${code}\`: ${meaning}`)
    .join('\n');
}

/** Responses shared by reference when an operation's codes for a status are exactly these. */
const SHARED: Record<string, { status: number; codes: string[] }> = {
  Unauthenticated: { status: 401, codes: ['unauthenticated'] },
  PayloadTooLarge: { status: 413, codes: ['payload_too_large'] },
  UnsupportedMediaType: { status: 415, codes: ['unsupported_media_type'] },
  RateLimited: { status: 429, codes: ['rate_limited'] },
  InternalError: { status: 500, codes: ['internal_error'] },
  DatabaseUnavailable: { status: 503, codes: ['database_unavailable'] },
};

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } } };

function errorResponse(status: number, codes: string[]): Json {
  return {
    description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    ...(status === 429 || codes.includes('database_unavailable') ? { headers: RETRY_AFTER } : {}),
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: ERROR_BODY_REF },
            { type: 'object', properties: { statusCode: { type: 'integer', enum: [status] }, code: { type: 'string', enum: codes } } },
          ],
        },
      },
    },
  };
}

/** The shared error responses, for `components.responses`. */
export function sharedErrorResponses(): Record<string, Json> {
  return Object.fromEntries(Object.entries(SHARED).map(([name, { status, codes }]) => [name, errorResponse(status, codes)]));
}

interface OperationLike {
  parameters?: { in: string; name: string; schema?: Json }[];
  requestBody?: { content?: Record<string, unknown> };
  responses?: Record<string, Json>;
}

/**
 * The error statuses and codes of one operation: derived from the operation (path ids, query,
 * body) and from its handler (auth decorator, rate limit), plus the codes it declares. Every
 * operation can also fail unexpectedly (500), and every one that reaches the database can find it
 * unavailable (503).
 */
export function errorCodes(method: string, op: OperationLike, route: RouteFacts, bodyIds = false): Map<number, string[]> {
  const codes = new Map<number, string[]>();
  const add = (status: number, ...list: string[]) => {
    const known = codes.get(status) ?? [];
    for (const c of list) if (!known.includes(c)) known.push(c);
    codes.set(status, known);
  };
  const params = op.parameters ?? [];
  // An agent route's `{id}` is the token's agent: anything else is 401, never 404.
  const pathParams = params.filter((p) => p.in === 'path' && !(route.auth?.kind === 'agent' && p.name === 'id'));
  const query = params.filter((p) => p.in === 'query');
  const content = Object.keys(op.requestBody?.content ?? {});
  const auth = route.auth;

  const validated = (content.length > 0 && route.validates.body) || (query.length > 0 && route.validates.query);
  if (validated) add(400, 'validation_failed');
  if (content.some((c) => c.endsWith('json'))) add(400, 'invalid_json');
  if (content.length) add(400, 'invalid_body');
  if (pathParams.some((p) => route.uuidParams.path.includes(p.name))) add(400, 'invalid_id');
  if (validated) add(400, 'invalid_input');
  if (auth?.kind === 'user' || auth?.kind === 'agent') add(401, 'unauthenticated');
  if (auth?.kind === 'user') {
    if (auth.permission !== undefined && (!Array.isArray(auth.permission) || auth.permission.length)) add(403, 'forbidden');
    if (auth.mfa) add(403, 'mfa_required');
    if (auth.partnerScope) add(403, 'partner_scope_required');
    if (auth.siteScope) add(403, 'site_access_denied');
  }
  // An id in the path, or one the query or body refers to (an organization, a site, a role…): unknown or out of reach.
  const queryIds = query.some((p) => p.schema?.format === 'uuid' || route.uuidParams.query.includes(p.name));
  if (pathParams.length || (queryIds && route.validates.query) || (bodyIds && route.validates.body)) add(404, 'not_found');
  if (method !== 'get' && (auth?.kind === 'user' || auth?.kind === 'agent')) add(409, 'conflict');
  if (content.length) add(413, 'payload_too_large');
  if (content.length) add(415, 'unsupported_media_type');
  if (route.throttled) add(429, 'rate_limited');
  for (const [status, list] of Object.entries(route.declared)) add(Number(status), ...(list ?? []));
  add(500, 'internal_error');
  if (route.reachesDatabase) add(503, 'database_unavailable');
  return new Map([...codes.entries()].sort(([a], [b]) => a - b));
}

/** Writes the error responses of one operation into it (by reference where one is shared). */
export function documentErrors(method: string, op: OperationLike, route: RouteFacts, bodyIds = false): void {
  const responses = (op.responses ??= {});
  for (const [status, codes] of errorCodes(method, op, route, bodyIds)) {
    const shared = Object.entries(SHARED).find(([, s]) => s.status === status && s.codes.length === codes.length && s.codes.every((c) => codes.includes(c)));
    responses[String(status)] = shared ? { $ref: `#/components/responses/${shared[0]}` } : errorResponse(status, codes);
  }
}

/** Adds the shared responses to a document's components. */
export function addSharedResponses(document: OpenAPIObject): void {
  const shared = sharedErrorResponses() as Record<string, { description: string }>;
  document.components = { ...document.components, responses: { ...document.components?.responses, ...shared } };
}
