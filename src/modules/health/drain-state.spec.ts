import { DrainState } from './drain-state';

describe('DrainState', () => {
  it('is serving until the stop starts, then draining with a deadline that the first start sets', () => {
    const drain = new DrainState();
    expect(drain.draining).toBe(false);
    expect(drain.remaining(10_000, 0)).toBe(10_000);
    drain.start(8000, 1000);
    drain.start(60_000, 2000);
    expect(drain.draining).toBe(true);
    expect(drain.deadline).toBe(9000);
    expect(drain.remaining(10_000, 4000)).toBe(5000);
    expect(drain.remaining(10_000, 12_000)).toBe(0);
  });
});
