import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { actionDigest, canonicalJson } from './canonical-json.util';

describe('canonicalJson', () => {
  it('sorts object keys at every depth and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
  });

  it('keeps array order, since it carries meaning', () => {
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it('orders keys by code unit, so upper case sorts before lower case', () => {
    expect(canonicalJson({ b: 1, B: 2, a: 3 })).toBe('{"B":2,"a":3,"b":1}');
  });

  it('escapes strings as JSON does and keeps non-ASCII text as is', () => {
    expect(canonicalJson({ path: 'C:\\Temp\\"x".txt', name: 'Zürich' })).toBe('{"name":"Zürich","path":"C:\\\\Temp\\\\\\"x\\".txt"}');
  });

  it('drops undefined members like JSON.stringify and refuses non-finite numbers', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(TypeError);
  });

  it('gives the same string for any key order of the same value', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        return canonicalJson(obj) === canonicalJson(reversed);
      }),
    );
  });

  it('parses back to a value equal to the input', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => expect(JSON.parse(canonicalJson(v))).toEqual(JSON.parse(JSON.stringify(v)))));
  });
});

describe('actionDigest', () => {
  it('is the SHA-256 hex of the canonical JSON', () => {
    const expected = createHash('sha256').update('{"pid":4242,"signal":"TERM"}').digest('hex');
    expect(actionDigest({ signal: 'TERM', pid: 4242 })).toBe(expected);
    expect(actionDigest({ signal: 'TERM', pid: 4242 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs when the input differs', () => {
    expect(actionDigest({ pid: 1 })).not.toBe(actionDigest({ pid: 2 }));
  });
});
