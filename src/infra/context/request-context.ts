import { AsyncLocalStorage } from 'node:async_hooks';
import { Global, Injectable, Module } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/** The Express request of the current context (to reach its response after the handler). */
export const REQUEST_KEY = 'request';

type Store = Map<string, unknown>;
const storage = new AsyncLocalStorage<Store>();

/**
 * What the code of one request (or one job) shares without passing it along: the request, its id
 * and address, the principal, the open transaction. One AsyncLocalStorage, entered once per request
 * by {@link requestContextMiddleware}; jobs and after-response work enter a context of their own
 * with {@link RequestContext.run}. (nestjs-cls did this before, at the price of a global no-op
 * interceptor and guard on every route, each a Nest async resource per request.)
 */
@Injectable()
export class RequestContext {
  isActive(): boolean {
    return storage.getStore() !== undefined;
  }

  get<T>(key: string): T | undefined {
    return storage.getStore()?.get(key) as T | undefined;
  }

  /** Sets a value in the current context; outside one there is nowhere to keep it. */
  set(key: string, value: unknown): void {
    const store = storage.getStore();
    if (!store) throw new Error(`no request context to set ${key} in`);
    store.set(key, value);
  }

  /**
   * Runs fn in a context of its own: `inherit` starts from a copy of the current context's values
   * (so what fn sets does not leak out), `fresh` from nothing.
   */
  run<T>(mode: 'inherit' | 'fresh', fn: () => T): T {
    const parent = storage.getStore();
    return storage.run(mode === 'inherit' && parent ? new Map(parent) : new Map(), fn);
  }

  /** The current request's id, for log lines written outside any per-request logger. */
  static requestId(): string | undefined {
    return storage.getStore()?.get('requestId') as string | undefined;
  }
}

/** Enters the request's context: mounted last before the router, after the body parsers. */
export function requestContextMiddleware(req: Request & { id?: string }, _res: Response, next: NextFunction): void {
  storage.run(
    new Map<string, unknown>([
      [REQUEST_KEY, req],
      ['requestId', req.id],
      ['ip', req.ip],
    ]),
    next,
  );
}

@Global()
@Module({ providers: [RequestContext], exports: [RequestContext] })
export class RequestContextModule {}
