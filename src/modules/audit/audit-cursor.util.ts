/**
 * A place in the audit log's export order, (created_at, id): the export resumes strictly after
 * it. Times are microseconds since the Unix epoch, PostgreSQL's own resolution, so that two
 * events of one millisecond never share a position.
 */
export interface AuditPosition {
  us: bigint;
  id: string;
}

/** The largest id in PostgreSQL's uuid order (bytewise): nothing sorts after it within its microsecond. */
export const LAST_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** The earliest and latest instants the export takes, in microseconds: 1970-01-01 and the end of 9999. */
export const EARLIEST_US = 0n;
export const LATEST_US = 253_402_300_799_999_999n;

const VERSION = 1;
const BYTES = 1 + 8 + 16;
const CURSOR = /^[A-Za-z0-9_-]{34}$/;

/** The position just before the instant `us`: resuming after it reads every event at or after that instant. */
export function before(us: bigint): AuditPosition {
  return { us: us - 1n, id: LAST_ID };
}

/** The position after every event at or before `us`. */
export function endOf(us: bigint): AuditPosition {
  return { us, id: LAST_ID };
}

/** Opaque to clients: a version byte, the time as a signed 64-bit integer, the id's 16 bytes; base64url. */
export function encodeCursor(p: AuditPosition): string {
  const buf = Buffer.alloc(BYTES);
  buf.writeUInt8(VERSION, 0);
  buf.writeBigInt64BE(p.us, 1);
  buf.write(p.id.replace(/-/g, ''), 9, 16, 'hex');
  return buf.toString('base64url');
}

/** The position a cursor names, or null when it is not one this service wrote (malformed, another version, out of range). */
export function decodeCursor(cursor: string): AuditPosition | null {
  if (!CURSOR.test(cursor)) return null;
  const buf = Buffer.from(cursor, 'base64url');
  // Base64 has several spellings of the last character's spare bits: only the one this service writes is accepted.
  if (buf.length !== BYTES || buf.toString('base64url') !== cursor || buf.readUInt8(0) !== VERSION) return null;
  const us = buf.readBigInt64BE(1);
  // `before(1970-01-01)` is one microsecond before the epoch.
  if (us < EARLIEST_US - 1n || us > LATEST_US) return null;
  const hex = buf.subarray(9).toString('hex');
  return { us, id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` };
}

/** The instant as PostgreSQL reads it back exactly: ISO 8601 in UTC with six decimals. */
export function isoMicros(us: bigint): string {
  const ms = floorMillis(us);
  return `${new Date(Number(ms)).toISOString().slice(0, 23)}${(us - ms * 1000n).toString().padStart(3, '0')}Z`;
}

/** The instant to the millisecond (earlier, never later), as the API writes times. */
export function isoMillis(us: bigint): string {
  return new Date(Number(floorMillis(us))).toISOString();
}

function floorMillis(us: bigint): bigint {
  return us >= 0n ? us / 1000n : -((-us + 999n) / 1000n);
}
