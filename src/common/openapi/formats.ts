/**
 * String and number types whose OpenAPI `format` a DTO states by naming them. They are plain
 * aliases to TypeScript; scripts/generate-openapi-metadata.js reads the alias a DTO property is
 * declared with and writes the format into the document (`createdAt: DateTime` becomes
 * `{ type: string, format: date-time }`). Request DTOs need none of this: their formats come from
 * their validators (`@IsUUID()` is `format: uuid`), see src/common/openapi/validation-schema.ts.
 */

/** A UUID (`format: uuid`). */
export type Uuid = string;
/** An ISO 8601 instant, always in UTC in answers (`format: date-time`). */
export type DateTime = string;
/** An email address (`format: email`). */
export type Email = string;
/** An absolute URL (`format: uri`). */
export type Url = string;
/** A whole number (`type: integer`). */
export type Int = number;

