import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';

export const API_ERRORS_META = 'openapi:errors';

/** Error statuses a route may declare, each with the `code`s it answers under that status. */
export type ApiErrorCodes = Partial<Record<400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 503, readonly string[]>>;

/**
 * The error codes a route answers beyond those the OpenAPI document derives from the route itself
 * (src/common/openapi/error-responses.ts): the auth decorator (401, 403 `forbidden`,
 * `mfa_required`, `partner_scope_required`, `site_access_denied`), path ids (400 `invalid_id`,
 * 404), a query or a body (400 `validation_failed`, `invalid_json`, 413, 415), `@Throttle` (429)
 * and writes (409 `conflict`). Name here the module's own codes (`*.errors.ts`), e.g.
 * `@ApiErrors({ 409: ['not_pending'], 403: ['self_approval'] })`. On a controller it applies to each
 * of its routes; on a route it adds to the controller's.
 */
export const ApiErrors = (codes: ApiErrorCodes): ClassDecorator & MethodDecorator =>
  ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const holder = descriptor ? descriptor.value : target;
    const previous: ApiErrorCodes = Reflect.getMetadata(API_ERRORS_META, holder) ?? {};
    const merged: Record<number, string[]> = { ...previous } as Record<number, string[]>;
    for (const [status, list] of Object.entries(codes)) merged[Number(status)] = [...new Set([...(merged[Number(status)] ?? []), ...(list ?? [])])];
    if (descriptor) return SetMetadata(API_ERRORS_META, merged)(target, key as string | symbol, descriptor);
    return SetMetadata(API_ERRORS_META, merged)(target as Function);
  }) as ClassDecorator & MethodDecorator;

/**
 * A browser navigation that always answers 302 with a `Location` (never a JSON body); `to` says
 * where it sends the browser.
 */
export const ApiRedirect = (to: string) =>
  applyDecorators(
    ApiResponse({
      status: 302,
      description: `Found: redirects the browser ${to}.`,
      headers: {
        Location: { description: 'Where the browser goes next.', schema: { type: 'string' } },
        'Set-Cookie': { description: 'The sign-in state cookie, set or cleared.', schema: { type: 'string' } },
      },
    }),
  );

export const API_BODY_CONTENT_META = 'openapi:body-content';

/**
 * A request body whose schema depends on its media type (swagger's @ApiBody gives every type one
 * schema). The document writes `requestBody.content` from it; `schemas` are added to
 * `components.schemas`, for the content to refer to (`{ $ref: '#/components/schemas/Name' }`).
 */
export const ApiBodyContent = (
  description: string,
  content: Record<string, Record<string, unknown>>,
  schemas: Record<string, Record<string, unknown>> = {},
): MethodDecorator => SetMetadata(API_BODY_CONTENT_META, { description, content, schemas });
