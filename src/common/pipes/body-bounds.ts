import type { NextFunction, Request, Response } from 'express';
import { AppException } from '../errors/app.exception';

/**
 * How deep and how large a parsed body may be before anything walks it. The validation pipe,
 * class-transformer and the rate-limit key functions walk bodies recursively, so a 2.6 KB body of
 * arrays nested 1,300 deep overflowed the stack (a 500). No route reads more than a few levels:
 * the deepest documented body (a dynamic-group filter) nests under ten, an interchange document
 * about eight. Members are object keys plus array items, counted over the whole body.
 */
export interface BodyBounds {
  depth: number;
  members: number;
}

export const BODY_BOUNDS: BodyBounds = Object.freeze({ depth: 32, members: 10_000 });

/**
 * A UTF-16 surrogate without its pair: JSON can spell one (`"\ud800"`), but it is no character.
 * Libraries that encode text throw on it (validator's isEmail through encodeURI: a 500), and
 * PostgreSQL would store U+FFFD in its place. With the `u` flag a well-formed pair is one code
 * point, so only unpaired halves match.
 */
const UNPAIRED_SURROGATE = /\p{Cs}/u;

const NOT_UNICODE = 'The body contains text that is not valid Unicode (an unpaired surrogate)';

/**
 * The first bound a parsed body exceeds, or the first string (value or key) that is not valid
 * Unicode, as a sentence; null when there is none. Iterative (an explicit stack), so the check
 * itself cannot overflow; its work is bounded by `bounds.members`.
 */
export function bodyBoundsProblem(body: unknown, bounds: BodyBounds = BODY_BOUNDS): string | null {
  if (typeof body === 'string') return UNPAIRED_SURROGATE.test(body) ? NOT_UNICODE : null;
  if (body === null || typeof body !== 'object') return null;
  const pending: { node: object; depth: number }[] = [{ node: body, depth: 1 }];
  let members = 0;
  for (let next = pending.pop(); next; next = pending.pop()) {
    const array = Array.isArray(next.node);
    const children: unknown[] = array ? (next.node as unknown[]) : Object.values(next.node);
    members += children.length;
    if (members > bounds.members) return `The body has more than ${bounds.members} members (object keys and array items)`;
    if (!array && Object.keys(next.node).some((k) => UNPAIRED_SURROGATE.test(k))) return NOT_UNICODE;
    for (const child of children) {
      if (typeof child === 'string') {
        if (UNPAIRED_SURROGATE.test(child)) return NOT_UNICODE;
        continue;
      }
      if (child === null || typeof child !== 'object') continue;
      if (next.depth + 1 > bounds.depth) return `The body nests objects and arrays deeper than ${bounds.depth} levels`;
      pending.push({ node: child, depth: next.depth + 1 });
    }
  }
  return null;
}

/**
 * Middleware run right after the body parsers: a body beyond its bounds, or with text that is
 * not Unicode, is 400 validation_failed, with one detail naming the body, before guards, pipes
 * or handlers see it.
 * `boundsFor` may give a route larger bounds (a bulk document).
 */
export function boundedBodies(boundsFor: (req: Request) => BodyBounds = () => BODY_BOUNDS) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const problem = bodyBoundsProblem(req.body, boundsFor(req));
    if (problem) return next(AppException.validation([{ field: 'body', message: problem }], 'The request body cannot be read as it is'));
    next();
  };
}
