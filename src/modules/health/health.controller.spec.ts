import type { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { AppException } from '../../common/errors/app.exception';
import { DrainState } from './drain-state';
import { HealthController } from './health.controller';

function controller(check: () => Promise<unknown>, draining = false): HealthController {
  const drain = new DrainState();
  if (draining) drain.start(10_000);
  return new HealthController({ check } as unknown as HealthCheckService, {} as TypeOrmHealthIndicator, drain);
}

describe('readiness', () => {
  it('answers the health result while the database answers', async () => {
    const result = { status: 'ok', info: { database: { status: 'up' } } };
    await expect(controller(async () => result).ready()).resolves.toBe(result);
  });

  it('answers 503 not_ready, not a 500, when the database check fails', async () => {
    const failing = controller(async () => {
      throw new Error('Service Unavailable');
    });
    const error = await failing.ready().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppException);
    expect(error).toMatchObject({ code: 'not_ready' });
    expect((error as AppException).getStatus()).toBe(503);
  });

  it('answers 503 draining once the instance shuts down, without checking the database', async () => {
    const check = jest.fn();
    await expect(controller(check, true).ready()).rejects.toMatchObject({ code: 'draining' });
    expect(check).not.toHaveBeenCalled();
  });
});
