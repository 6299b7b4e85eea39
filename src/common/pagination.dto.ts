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
