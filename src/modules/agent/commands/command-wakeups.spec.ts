import type { PgListener } from '../../../infra/database/pg-listener.service';
import { DrainState } from '../../health/drain-state';
import type { MetricsService } from '../../../infra/metrics/metrics.service';
import { AGENT_COMMANDS_CHANNEL, CommandWakeups, FALLBACK_POLL_MS } from './command-wakeups';

/** A listener whose connection state the test sets, and whose notifications and reconnections it sends. */
function fakeListener() {
  const handlers = new Map<string, (payload: string) => void>();
  const connected: (() => void)[] = [];
  const listener = {
    connected: true,
    on: (channel: string, fn: (payload: string) => void) => (handlers.set(channel, fn), () => undefined),
    onConnected: (fn: () => void) => (connected.push(fn), () => undefined),
  };
  return { listener, notify: (payload: string) => handlers.get(AGENT_COMMANDS_CHANNEL)!(payload), reconnect: () => connected.forEach((fn) => fn()) };
}

describe('CommandWakeups (the held waits of one instance)', () => {
  let fake: ReturnType<typeof fakeListener>;
  let drain: DrainState;
  let hub: CommandWakeups;

  beforeEach(() => {
    jest.useFakeTimers();
    fake = fakeListener();
    drain = new DrainState();
    hub = new CommandWakeups(fake.listener as unknown as PgListener, drain, { gauge: () => undefined } as unknown as MetricsService);
    hub.onModuleInit();
  });
  afterEach(() => jest.useRealTimers());

  it('wakes the waits of the notified device only', async () => {
    const a = hub.register('org', 'device-a');
    const b = hub.register('org', 'device-b');
    const outcomes: string[] = [];
    void a.next(60_000).then((o) => outcomes.push(`a:${o}`));
    void b.next(1_000).then((o) => outcomes.push(`b:${o}`));
    fake.notify('org:device-a');
    await jest.advanceTimersByTimeAsync(1_000);
    expect(outcomes).toEqual(['a:wake', 'b:timeout']);
  });

  it('remembers a wake-up that arrives between two reads of the queue', async () => {
    const waiter = hub.register('org', 'device');
    fake.notify('org:device');
    await expect(waiter.next(60_000)).resolves.toBe('wake');
  });

  it('polls every FALLBACK_POLL_MS while notifications are down, and not before the wait would end', async () => {
    fake.listener.connected = false;
    const waiter = hub.register('org', 'device');
    let outcome: string | null = null;
    void waiter.next(60_000).then((o) => (outcome = o));
    await jest.advanceTimersByTimeAsync(FALLBACK_POLL_MS - 1);
    expect(outcome).toBeNull();
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome).toBe('wake');
    await expect(Promise.race([waiter.next(500), jest.advanceTimersByTimeAsync(500).then(() => 'pending')])).resolves.toBe('timeout');
  });

  it('wakes every wait within FALLBACK_POLL_MS after the notification connection comes back, one may have been missed', async () => {
    const waiters = [hub.register('org', 'd1'), hub.register('org', 'd2')];
    const outcomes: string[] = [];
    for (const w of waiters) void w.next(60_000).then((o) => outcomes.push(o));
    fake.reconnect();
    await jest.advanceTimersByTimeAsync(FALLBACK_POLL_MS);
    expect(outcomes).toEqual(['wake', 'wake']);
  });

  it('answers every wait at the drain, and any wait begun after it at once', async () => {
    const waiter = hub.register('org', 'device');
    const pending = waiter.next(60_000);
    drain.start(10_000);
    await expect(pending).resolves.toBe('drain');
    await expect(hub.register('org', 'other').next(60_000)).resolves.toBe('drain');
  });

  it('counts the waits held and forgets a closed one', () => {
    const waiter = hub.register('org', 'device');
    hub.register('org', 'device');
    expect(hub.size).toBe(2);
    waiter.close();
    waiter.close();
    expect(hub.size).toBe(1);
  });
});
