import { isUtf8 } from 'node:buffer';

export interface Utf8Problem {
  /** 1-based line of the first byte that is not UTF-8. */
  line: number;
  /** 1-based byte within that line. */
  column: number;
  byte: number;
}

/**
 * Where `bytes` first stops being UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF), or null when it is UTF-8 throughout. The whole-buffer check is native; the walk that
 * finds the line runs only for a buffer that failed it.
 */
export function utf8Problem(bytes: Uint8Array): Utf8Problem | null {
  if (isUtf8(bytes)) return null;
  let line = 1;
  let lineStart = 0;
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const length = sequenceLength(bytes, i);
    if (length === 0) return { line, column: i - lineStart + 1, byte: b };
    if (b === 0x0a) {
      line++;
      lineStart = i + 1;
    }
    i += length;
  }
  // isUtf8 and this walk disagree only if one of them is wrong; name the end rather than nothing.
  return { line, column: i - lineStart + 1, byte: 0 };
}

/** The length of the well-formed sequence starting at `i`, or 0 if none starts there. */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i];
  if (b < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < bytes.length && bytes[i + k] >= lo && bytes[i + k] <= hi;
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((b >= 0xe1 && b <= 0xec) || b === 0xee || b === 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (b === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (b === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b >= 0xf1 && b <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}
