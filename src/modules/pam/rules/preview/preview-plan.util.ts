/**
 * The arithmetic of a preview scan, kept pure so that it can be tested without a database.
 *
 * The window is scanned newest first in slices, each one parallel aggregate grouped by hour
 * bucket and status. The first slice is the newest day; each next one is sized from the rate
 * seen so far so that the scan ends near the scan limit: usually the whole rest of the window
 * at once (two queries in all), never more than twice the span already scanned. Scanning stops
 * after the slice where the count passes the limit, so the work stays bounded (about three
 * times the limit at worst) whatever the window holds. The hour buckets then give the exact cut
 * (the newest `limit` requests, ties broken by id) and tell the sample query which few hours
 * hold the newest matches.
 */

export const BUCKET_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Slack on the projection: one more slice costs a query, a slightly larger one only rows. */
const PROJECTION_SLACK = 1.25;
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

const floorToHour = (ms: number) => Math.floor(ms / BUCKET_MS) * BUCKET_MS;

export function windowStartOf(asOf: Date, windowDays: number): Date {
  return new Date(asOf.getTime() - windowDays * DAY_MS);
}

/** The newest day, its older edge on an hour boundary; the whole window when that is shorter. */
export function firstSlice(asOf: Date, windowStart: Date): Slice {
  const edge = floorToHour(asOf.getTime() - DAY_MS);
  return { from: edge > windowStart.getTime() ? new Date(edge) : windowStart, to: null };
}

/**
 * The slice older than `edge` (the oldest instant scanned so far), or null when the window is
 * done. `scanned` requests were found since `edge`. Inner edges stay on hour boundaries, so no
 * hour bucket spans two slices.
 */
export function nextSlice(asOf: Date, windowStart: Date, edge: Date, scanned: number, limit: number): Slice | null {
  if (edge.getTime() <= windowStart.getTime()) return null;
  const scannedSpan = asOf.getTime() - edge.getTime();
  const rest = edge.getTime() - windowStart.getTime();
  const rate = scanned / scannedSpan;
  const remaining = Math.max(0, limit - scanned);
  if (rate * rest <= remaining * PROJECTION_SLACK) return { from: windowStart, to: edge };
  const span = Math.min(rest, Math.max(BUCKET_MS, remaining / rate), 2 * scannedSpan);
  const from = floorToHour(edge.getTime() - span);
  return { from: from > windowStart.getTime() ? new Date(from) : windowStart, to: edge };
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
