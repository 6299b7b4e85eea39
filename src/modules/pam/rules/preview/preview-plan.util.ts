/**
 * The arithmetic of a preview scan, kept pure so that it can be tested without a database.
 *
 * The window is scanned newest first in slices (1, 3, 7, 15, 31 and 63 days back, then the
 * rest), each slice one parallel aggregate grouped by hour bucket and status. Scanning stops
 * after the slice where the count passes the scan limit, so the work stays bounded by about
 * twice the limit whatever the window holds. The hour buckets then give the exact cut (the
 * newest `limit` requests, ties broken by id) and tell the sample query which few hours
 * hold the newest matches.
 */

export const BUCKET_MS = 3_600_000;
const DAY_MS = 86_400_000;
const SLICE_DAYS = [1, 3, 7, 15, 31, 63];
export const SAMPLE_SIZE = 20;

export const REQUEST_STATUSES = ['pending', 'approved', 'auto_approved', 'denied', 'expired', 'revoked', 'actuating'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];
export type StatusCounts = Record<RequestStatus, number>;

export function emptyCounts(): StatusCounts {
  return { pending: 0, approved: 0, auto_approved: 0, denied: 0, expired: 0, revoked: 0, actuating: 0 };
}

export interface Slice {
  /** Inclusive. */
  from: Date;
  /** Exclusive; null for the newest slice, bounded by the window end only. */
  to: Date | null;
}

/** Slices of (windowStart, asOf], newest first, their inner edges on hour boundaries. */
export function windowSlices(asOf: Date, windowDays: number): { windowStart: Date; slices: Slice[] } {
  const windowStart = new Date(asOf.getTime() - windowDays * DAY_MS);
  const edges = SLICE_DAYS.filter((days) => days < windowDays)
    .map((days) => Math.floor((asOf.getTime() - days * DAY_MS) / BUCKET_MS) * BUCKET_MS)
    .filter((edge) => edge > windowStart.getTime());
  const slices: Slice[] = [];
  let to: Date | null = null;
  for (const edge of edges) {
    slices.push({ from: new Date(edge), to });
    to = new Date(edge);
  }
  slices.push({ from: windowStart, to });
  return { windowStart, slices };
}

/** One row of the bucket aggregate. */
export interface BucketRow {
  bucket: Date;
  status: string;
  scanned: number;
  matched: number;
}

export interface Bucket {
  /** Start of the hour, epoch milliseconds. */
  start: number;
  scanned: number;
  matched: number;
  matchedByStatus: StatusCounts;
}

/** Merges aggregate rows into hour buckets (a bucket never spans two slices, but merging is harmless). */
export function addBucketRows(buckets: Map<number, Bucket>, rows: readonly BucketRow[]): void {
  for (const row of rows) {
    const start = row.bucket.getTime();
    let bucket = buckets.get(start);
    if (!bucket) {
      bucket = { start, scanned: 0, matched: 0, matchedByStatus: emptyCounts() };
      buckets.set(start, bucket);
    }
    bucket.scanned += row.scanned;
    bucket.matched += row.matched;
    if (row.matched > 0 && (REQUEST_STATUSES as readonly string[]).includes(row.status)) {
      bucket.matchedByStatus[row.status as RequestStatus] += row.matched;
    }
  }
}

export function totalScanned(buckets: Map<number, Bucket>): number {
  let total = 0;
  for (const bucket of buckets.values()) total += bucket.scanned;
  return total;
}

export interface Cut {
  /** Buckets scanned whole, newest first. */
  whole: Bucket[];
  /** The bucket the limit falls inside, and how many of its newest requests are in. */
  partial: { bucket: Bucket; keep: number } | null;
  truncated: boolean;
}

/** Which buckets the newest `limit` requests fill. */
export function cutAtLimit(buckets: Map<number, Bucket>, limit: number): Cut {
  const newestFirst = [...buckets.values()].sort((a, b) => b.start - a.start);
  const whole: Bucket[] = [];
  let running = 0;
  for (const bucket of newestFirst) {
    if (running + bucket.scanned <= limit) {
      whole.push(bucket);
      running += bucket.scanned;
      continue;
    }
    const keep = limit - running;
    return { whole, partial: keep > 0 ? { bucket, keep } : null, truncated: true };
  }
  return { whole, partial: null, truncated: false };
}

/** The newest buckets holding matches, enough for a full sample: at most SAMPLE_SIZE of them. */
export function sampleBuckets(newestFirst: readonly Bucket[]): number[] {
  const starts: number[] = [];
  let found = 0;
  for (const bucket of newestFirst) {
    if (found >= SAMPLE_SIZE) break;
    if (bucket.matched === 0) continue;
    starts.push(bucket.start);
    found += bucket.matched;
  }
  return starts;
}

export function sumMatched(buckets: readonly Bucket[]): { matched: number; byStatus: StatusCounts } {
  const byStatus = emptyCounts();
  let matched = 0;
  for (const bucket of buckets) {
    matched += bucket.matched;
    for (const status of REQUEST_STATUSES) byStatus[status] += bucket.matchedByStatus[status];
  }
  return { matched, byStatus };
}
