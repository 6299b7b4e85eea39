import {
  addBucketRows,
  BUCKET_MS,
  cutAtLimit,
  emptyCounts,
  sampleBuckets,
  sumMatched,
  totalScanned,
  firstSlice,
  nextSlice,
  windowStartOf,
  type Bucket,
} from './preview-plan.util';

const HOUR = BUCKET_MS;
const DAY = 24 * HOUR;

function bucket(start: number, scanned: number, matched = 0): Bucket {
  return { start, scanned, matched, matchedByStatus: { ...emptyCounts(), pending: matched } };
}

function map(...buckets: Bucket[]): Map<number, Bucket> {
  return new Map(buckets.map((b) => [b.start, b]));
}

describe('slices', () => {
  const asOf = new Date('2025-03-10T12:34:56.789Z');
  const windowStart = windowStartOf(asOf, 90);

  it('starts with the newest day, its older edge on an hour boundary', () => {
    expect(windowStart.toISOString()).toBe('2024-12-10T12:34:56.789Z');
    expect(firstSlice(asOf, windowStart)).toEqual({ from: new Date('2025-03-09T12:00:00.000Z'), to: null });
  });

  it('covers a window of a day or less in one slice', () => {
    const start = windowStartOf(asOf, 1);
    const first = firstSlice(asOf, start);
    expect(first).toEqual({ from: start, to: null });
    expect(nextSlice(asOf, start, first.from, 10, 1000)).toBeNull();
  });

  it('takes the rest of the window at once when the rate seen so far fits the limit', () => {
    const first = firstSlice(asOf, windowStart);
    expect(nextSlice(asOf, windowStart, first.from, 11_000, 1_000_000)).toEqual({ from: windowStart, to: first.from });
    expect(nextSlice(asOf, windowStart, first.from, 0, 1_000_000)).toEqual({ from: windowStart, to: first.from });
  });

  it('sizes the next slice to reach about the limit, on hour boundaries, at most twice the span scanned (plus the rounding)', () => {
    const first = firstSlice(asOf, windowStart);
    const scannedSpan = asOf.getTime() - first.from.getTime();
    const next = nextSlice(asOf, windowStart, first.from, 50_000, 1_000_000)!;
    expect(next.to).toEqual(first.from);
    expect(next.from.getTime() % HOUR).toBe(0);
    expect(first.from.getTime() - next.from.getTime()).toBeLessThanOrEqual(2 * scannedSpan + HOUR);
    const dense = nextSlice(asOf, windowStart, first.from, 900_000, 1_000_000)!;
    expect(first.from.getTime() - dense.from.getTime()).toBeGreaterThanOrEqual(HOUR);
    expect(first.from.getTime() - dense.from.getTime()).toBeLessThan(4 * HOUR);
  });

  it('ends at the window start and then stops', () => {
    expect(nextSlice(asOf, windowStart, windowStart, 5, 10)).toBeNull();
    const nearStart = new Date(windowStart.getTime() + 30 * 60_000);
    expect(nextSlice(asOf, windowStart, nearStart, 900_000, 1_000_000)).toEqual({ from: windowStart, to: nearStart });
  });

  it('covers any window without gaps or overlaps, whatever the density', () => {
    for (const density of [0, 100, 10_000, 400_000]) {
      let slice: ReturnType<typeof nextSlice> = firstSlice(asOf, windowStart);
      let scanned = 0;
      let covered = 0;
      while (slice) {
        const to = slice.to ?? asOf;
        expect(slice.from.getTime()).toBeLessThan(to.getTime());
        covered += to.getTime() - slice.from.getTime();
        scanned += Math.round(((to.getTime() - slice.from.getTime()) / DAY) * density);
        if (scanned > 1_000_000) break;
        slice = nextSlice(asOf, windowStart, slice.from, scanned, 1_000_000);
      }
      if (scanned <= 1_000_000) expect(covered).toBe(asOf.getTime() - windowStart.getTime());
      expect(scanned).toBeLessThan(3_000_000);
    }
  });
});

describe('addBucketRows', () => {
  it('sums scanned and matched per hour and matched per status', () => {
    const buckets = new Map<number, Bucket>();
    addBucketRows(buckets, [
      { bucket: new Date(0), status: 'pending', scanned: 5, matched: 2 },
      { bucket: new Date(0), status: 'denied', scanned: 3, matched: 1 },
      { bucket: new Date(HOUR), status: 'approved', scanned: 4, matched: 0 },
    ]);
    expect(buckets.get(0)).toMatchObject({ scanned: 8, matched: 3, matchedByStatus: { pending: 2, denied: 1, approved: 0 } });
    expect(totalScanned(buckets)).toBe(12);
  });
});

describe('cutAtLimit', () => {
  it('keeps everything when the window holds no more than the limit', () => {
    const cut = cutAtLimit(map(bucket(0, 5), bucket(HOUR, 5)), 10);
    expect(cut).toMatchObject({ truncated: false, partial: null });
    expect(cut.whole.map((b) => b.start)).toEqual([HOUR, 0]);
  });

  it('keeps the newest buckets whole and the newest part of the bucket the limit falls in', () => {
    const cut = cutAtLimit(map(bucket(0, 5), bucket(HOUR, 5), bucket(2 * HOUR, 5)), 12);
    expect(cut.truncated).toBe(true);
    expect(cut.whole.map((b) => b.start)).toEqual([2 * HOUR, HOUR]);
    expect(cut.partial).toEqual({ bucket: expect.objectContaining({ start: 0 }), keep: 2 });
  });

  it('needs no partial bucket when the limit falls on a bucket edge', () => {
    const cut = cutAtLimit(map(bucket(0, 5), bucket(HOUR, 5)), 5);
    expect(cut).toMatchObject({ truncated: true, partial: null });
    expect(cut.whole.map((b) => b.start)).toEqual([HOUR]);
  });
});

describe('sampleBuckets', () => {
  it('takes the newest buckets with matches until they hold twenty', () => {
    const buckets = [bucket(5 * HOUR, 10, 0), bucket(4 * HOUR, 10, 15), bucket(3 * HOUR, 10, 0), bucket(2 * HOUR, 10, 5), bucket(HOUR, 10, 7)];
    expect(sampleBuckets(buckets)).toEqual([4 * HOUR, 2 * HOUR]);
  });

  it('takes every bucket with a match when there are fewer than twenty, and none without matches', () => {
    expect(sampleBuckets([bucket(HOUR, 3, 1), bucket(0, 3, 2)])).toEqual([HOUR, 0]);
    expect(sampleBuckets([bucket(HOUR, 3, 0)])).toEqual([]);
  });
});

describe('sumMatched', () => {
  it('adds matches and their statuses across buckets', () => {
    expect(sumMatched([bucket(0, 9, 2), bucket(HOUR, 9, 3)])).toEqual({ matched: 5, byStatus: { ...emptyCounts(), pending: 5 } });
  });
});
