import { stableJson } from './json.util';

describe('stable JSON', () => {
  it('ignores key order and undefined members but not array order', () => {
    expect(stableJson({ b: 1, a: { d: [2, 1], c: null }, z: undefined })).toBe(stableJson({ a: { c: null, d: [2, 1] }, b: 1 }));
    expect(stableJson([1, 2])).not.toBe(stableJson([2, 1]));
    expect(stableJson(undefined)).toBe('null');
  });
});
