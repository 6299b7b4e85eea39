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
 * The first bound a parsed body exceeds, as a sentence, or null. Iterative (an explicit stack),
 * so the check itself cannot overflow; its work is bounded by `bounds.members`.
 */
export function bodyBoundsProblem(body: unknown, bounds: BodyBounds = BODY_BOUNDS): string | null {
  if (body === null || typeof body !== 'object') return null;
  const pending: { node: object; depth: number }[] = [{ node: body, depth: 1 }];
  let members = 0;
  for (let next = pending.pop(); next; next = pending.pop()) {
    const children: unknown[] = Array.isArray(next.node) ? next.node : Object.values(next.node);
    members += children.length;
    if (members > bounds.members) return `The body has more than ${bounds.members} members (object keys and array items)`;
    for (const child of children) {
      if (child === null || typeof child !== 'object') continue;
      if (next.depth + 1 > bounds.depth) return `The body nests objects and arrays deeper than ${bounds.depth} levels`;
      pending.push({ node: child, depth: next.depth + 1 });
    }
  }
  return null;
}

/**
 * Middleware run right after the body parsers: a body beyond its bounds is 400
 * validation_failed, with one detail naming the body, before guards, pipes or handlers see it.
 * `boundsFor` may give a route larger bounds (a bulk document).
 */
export function boundedBodies(boundsFor: (req: Request) => BodyBounds = () => BODY_BOUNDS) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const problem = bodyBoundsProblem(req.body, boundsFor(req));
    if (problem) return next(AppException.validation([{ field: 'body', message: problem }], 'The request body is too deeply nested or too large to read'));
    next();
  };
}
