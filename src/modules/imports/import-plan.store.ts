import { gunzipSync, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { ImportPlan } from './document/import-plan';

const gzipAsync = promisify(gzip);

/**
 * A plan as the job row keeps it until the job ends: gzip-compressed JSON (fastest level). For the
 * 60,000-record benchmark document the plan is about 10 MB of JSON and 1 MB compressed: storing
 * it as jsonb had the database parse and compress 10 MB inside the request that answers 202
 * (about a second), and sent it as a 10 MB literal. The compression runs off the event loop.
 */
export function zipPlan(plan: ImportPlan): Promise<Buffer> {
  return gzipAsync(JSON.stringify(plan), { level: 1 });
}

export function unzipPlan(stored: Buffer): ImportPlan {
  return JSON.parse(gunzipSync(stored).toString('utf8')) as ImportPlan;
}
