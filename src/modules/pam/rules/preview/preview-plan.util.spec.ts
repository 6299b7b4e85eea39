import {
  addBucketRows,
  BUCKET_MS,
  cutAtLimit,
  emptyCounts,
  sampleBuckets,
  sumMatched,
  totalScanned,
  windowSlices,
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

describe('windowSlices', () => {
  const asOf = new Date('2025-03-10T12:34:56.789Z');

  it('covers the whole window, newest first, without gaps or overlaps', () => {
    const { windowStart, slices } = windowSlices(asOf, 90);
    expect(windowStart.toISOString()).toBe('2024-12-10T12:34:56.789Z');
    expect(slices[0].to).toBeNull();
    expect(slices[slices.length - 1].from).toEqual(windowStart);
    for (let i = 1; i < slices.length; i++) expect(slices[i].to).toEqual(slices[i - 1].from);
    expect(slices).toHaveLength(7);
  });

  it('puts inner edges on hour boundaries so that no hour bucket spans two slices', () => {
    const { slices } = windowSlices(asOf, 90);
    for (const slice of slices.slice(0, -1)) expect(slice.from.getTime() % HOUR).toBe(0);
    expect(slices[0].from.toISOString()).toBe('2025-03-09T12:00:00.000Z');
  });

  it('uses one slice for a one-day window and fewer slices for shorter windows', () => {
    expect(windowSlices(asOf, 1).slices).toEqual([{ from: new Date(asOf.getTime() - DAY), to: null }]);
    expect(windowSlices(asOf, 30).slices).toHaveLength(5);
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
