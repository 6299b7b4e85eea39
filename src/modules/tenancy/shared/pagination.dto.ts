import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export class PageQueryDto {
  /** 1-based page number. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) page?: number = 1;
  /** Page size, 1 to 100 (default 50). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number = 50;
}

export class PaginationDto {
  page: number;
  limit: number;
  total: number;
}

export class SuccessDto {
  success: true;
}
