import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import type { Int } from './openapi/formats';

export class PageQueryDto {
  /** 1-based page number. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) page?: number = 1;
  /** Page size, 1 to 100 (default 50). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number = 50;
}

export class PaginationDto {
  page: Int;
  limit: Int;
  total: Int;
}

export class SuccessDto {
  success: true;
}

/**
 * An offset a query builder can write into its SQL: it writes the number as JavaScript prints it, so a
 * page far past any row (page=1e308) would print `1e+308`, which is no SQL integer. Any offset beyond
 * the largest safe integer is past the end of every table; it becomes that integer.
 */
export function pastTheEnd(offset: number): number {
  return Number.isSafeInteger(offset) ? offset : Number.MAX_SAFE_INTEGER;
}
