import { applyDecorators } from '@nestjs/common';
import { IsString, Length, NotContains } from 'class-validator';

/**
 * A string of `min` to `max` characters that PostgreSQL can store: text columns refuse the NUL
 * character, which would otherwise surface as a server error instead of a 400.
 */
export const IsText = (min: number, max: number) =>
  applyDecorators(IsString(), Length(min, max), NotContains('\u0000', { message: '$property must not contain NUL characters' }));
