import { before, decodeCursor, encodeCursor, endOf, isoMicros, isoMillis, LAST_ID, LATEST_US } from './audit-cursor.util';

describe('audit export cursors', () => {
  const position = { us: 1_772_357_400_123_456n, id: '0f8fad5b-d9cb-469f-a165-70867728950e' };

  it('decode to exactly the position they were made from, microseconds and id', () => {
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]{34}$/);
    expect(decodeCursor(cursor)).toEqual(position);
    expect(decodeCursor(encodeCursor(before(0n)))).toEqual({ us: -1n, id: LAST_ID });
    expect(decodeCursor(encodeCursor(endOf(LATEST_US)))).toEqual({ us: LATEST_US, id: LAST_ID });
  });

  it('refuse text this service did not write: other lengths, characters, versions and spellings', () => {
    const cursor = encodeCursor(position);
    const bytes = Buffer.from(cursor, 'base64url');
    const withVersion = (v: number) => Buffer.concat([Buffer.from([v]), bytes.subarray(1)]).toString('base64url');
    expect(decodeCursor('')).toBeNull();
    expect(decodeCursor(cursor.slice(1))).toBeNull();
    expect(decodeCursor(`${cursor}A`)).toBeNull();
    expect(decodeCursor(`${cursor.slice(0, 33)}=`)).toBeNull();
    expect(decodeCursor(`${cursor.slice(0, 33)}+`)).toBeNull();
    expect(decodeCursor(withVersion(2))).toBeNull();
    expect(decodeCursor(withVersion(0))).toBeNull();
    // The last character carries two bits of data and four spare ones: only the spelling with spare bits clear is a cursor.
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const other = last[(last.indexOf(cursor[33]) ^ 1) % 64];
    expect(decodeCursor(cursor.slice(0, 33) + other)).toBeNull();
  });

  it('refuse times before 1970 and after 9999', () => {
    expect(decodeCursor(encodeCursor({ us: -2n, id: LAST_ID }))).toBeNull();
    expect(decodeCursor(encodeCursor({ us: LATEST_US + 1n, id: LAST_ID }))).toBeNull();
  });

  it('write instants for PostgreSQL with all six decimals, and for people to the millisecond, earlier never later', () => {
    expect(isoMicros(position.us)).toBe('2026-03-01T09:30:00.123456Z');
    expect(isoMicros(5n)).toBe('1970-01-01T00:00:00.000005Z');
    expect(isoMicros(-1n)).toBe('1969-12-31T23:59:59.999999Z');
    expect(isoMillis(position.us)).toBe('2026-03-01T09:30:00.123Z');
    expect(isoMillis(-1n)).toBe('1969-12-31T23:59:59.999Z');
  });
});
