import { SetMetadata } from '@nestjs/common';
import type { Request } from 'express';

export const RATE_KEY = 'rate:key';

/** The key a route's rate limit counts by (default: the client IP). */
export const RateKey = (fn: (req: Request) => string) => SetMetadata(RATE_KEY, fn);
