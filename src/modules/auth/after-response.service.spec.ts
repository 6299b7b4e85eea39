import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import { REQUEST_KEY, RequestContext } from '../../infra/context/request-context';
import { DrainState } from '../health/drain-state';
import { AfterResponseService } from './after-response.service';

/** A RequestContext stand-in holding one request whose response is an event emitter. */
function clsWith(res: (EventEmitter & { writableFinished: boolean; destroyed: boolean }) | null): RequestContext {
  return {
    isActive: () => res !== null,
    get: (key: unknown) => (key === REQUEST_KEY && res ? { res } : undefined),
    run: (_opts: unknown, fn: () => unknown) => fn(),
  } as unknown as RequestContext;
}

const response = () => Object.assign(new EventEmitter(), { writableFinished: false, destroyed: false });
const turn = () => new Promise((r) => setImmediate(r));

describe('AfterResponseService', () => {
  it('starts a task only once the response has finished', async () => {
    const res = response();
    const service = new AfterResponseService(clsWith(res));
    const task = jest.fn(async () => undefined);
    service.schedule('test', task);
    await turn();
    await turn();
    expect(task).not.toHaveBeenCalled();
    res.emit('finish');
    await service.drain();
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('starts a task when the client went away before the answer finished', async () => {
    const res = response();
    const service = new AfterResponseService(clsWith(res));
    const task = jest.fn(async () => undefined);
    service.schedule('test', task);
    res.emit('close');
    await service.drain();
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('starts a task on the next turn outside a request', async () => {
    const service = new AfterResponseService(clsWith(null));
    const task = jest.fn(async () => undefined);
    service.schedule('test', task);
    expect(task).not.toHaveBeenCalled();
    await service.drain();
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('drains tasks scheduled by other tasks, and logs a failure instead of throwing it', async () => {
    const service = new AfterResponseService(clsWith(null));
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const second = jest.fn(async () => {
      throw new Error('smtp down');
    });
    service.schedule('first', async () => service.schedule('second', second));
    await service.drain();
    expect(second).toHaveBeenCalledTimes(1);
    expect(error).toHaveBeenCalledWith('second failed: smtp down');
    error.mockRestore();
  });

  it('stops waiting for unfinished tasks at the graceful stop\'s deadline', async () => {
    const drain = new DrainState();
    const service = new AfterResponseService(clsWith(null), drain);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    service.schedule('hangs', () => new Promise<void>(() => undefined));
    await turn();
    drain.start(50);
    const started = Date.now();
    await service.beforeApplicationShutdown();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(warn).toHaveBeenCalledWith('Stopping with 1 after-response task(s) unfinished');
    warn.mockRestore();
  });

  it('waits for tasks that finish before the deadline', async () => {
    const drain = new DrainState();
    const service = new AfterResponseService(clsWith(null), drain);
    let done = false;
    service.schedule('mail', () => new Promise<void>((r) => setTimeout(() => ((done = true), r()), 50)));
    drain.start(5000);
    await service.beforeApplicationShutdown();
    expect(done).toBe(true);
  });
});
