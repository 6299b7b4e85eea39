import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Throttle, ThrottlerException, ThrottlerStorage } from '@nestjs/throttler';
import { AppThrottlerGuard, THROTTLERS } from './app-throttler.guard';

class Routes {
  open(): void {}

  @Throttle({ default: { limit: 2, ttl: 60_000 } })
  limited(): void {}

  @Throttle({ 'per-tenant': { limit: 1, ttl: 60_000, getTracker: () => 'tenant-a', generateKey: (_c, tracker) => `shared:${tracker}` } })
  perTenant(): void {}
}

function contextFor(handler: keyof Routes, headers: Record<string, string>): ExecutionContext {
  const req = { ip: '192.0.2.1', headers: {}, params: {} };
  const res = { header: (name: string, value: string) => void (headers[name] = String(value)), setHeader: (name: string, value: string) => void (headers[name] = String(value)) };
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
  } as unknown as ExecutionContext;
}

async function guardWith() {
  const counted: string[] = [];
  const hits = new Map<string, number>();
  const storage: ThrottlerStorage = {
    increment: async (key: string, ttl: number, limit: number) => {
      counted.push(key);
      const total = (hits.get(key) ?? 0) + 1;
      hits.set(key, total);
      return { totalHits: total, timeToExpire: ttl / 1000, isBlocked: total > limit, timeToBlockExpire: 42 };
    },
  };
  const guard = new AppThrottlerGuard({ throttlers: THROTTLERS }, storage, new Reflector());
  await guard.onModuleInit();
  return { guard, counted };
}

describe('AppThrottlerGuard', () => {
  it('counts nothing on a route that declares no limit', async () => {
    const { guard, counted } = await guardWith();
    await expect(guard.canActivate(contextFor('open', {}))).resolves.toBe(true);
    expect(counted).toEqual([]);
  });

  it('counts a route only under the named throttlers its @Throttle names', async () => {
    const { guard, counted } = await guardWith();
    await guard.canActivate(contextFor('limited', {}));
    expect(counted).toHaveLength(1);
  });

  it("uses the route's own tracker and key, so routes can share one budget", async () => {
    const { guard, counted } = await guardWith();
    await guard.canActivate(contextFor('perTenant', {}));
    expect(counted).toEqual(['shared:tenant-a']);
  });

  it('refuses past the limit with the standard Retry-After header, whatever the throttler is named', async () => {
    const { guard } = await guardWith();
    const headers: Record<string, string> = {};
    await guard.canActivate(contextFor('perTenant', headers));
    await expect(guard.canActivate(contextFor('perTenant', headers))).rejects.toBeInstanceOf(ThrottlerException);
    expect(headers['Retry-After']).toBe('42');
  });
});
