import { NotContains, ValidationOptions } from 'class-validator';

/**
 * PostgreSQL text cannot hold the NUL character: refusing it at validation keeps such input a
 * 400 instead of a database error.
 */
export const NoNul = (options?: ValidationOptions) => NotContains('\u0000', { message: '$property must not contain NUL characters', ...options });
