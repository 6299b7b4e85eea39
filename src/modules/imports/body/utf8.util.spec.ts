import fc from 'fast-check';
import { utf8Problem } from './utf8.util';

describe('finding where a body stops being UTF-8', () => {
  it('accepts any text encoded as UTF-8', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => utf8Problem(Buffer.from(s, 'utf8')) === null));
  });

  it('names the line and column of a Latin-1 byte', () => {
    const latin1 = Buffer.from('externalId,name\nx,Ann\ny,Jos\xe9 M\xfcller\n', 'latin1');
    expect(utf8Problem(latin1)).toEqual({ line: 3, column: 6, byte: 0xe9 });
  });

  it('refuses overlong forms, surrogates, code points above U+10FFFF and cut-off sequences', () => {
    for (const bytes of [[0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0xff]]) {
      expect(utf8Problem(Buffer.from([0x61, ...bytes]))).toMatchObject({ line: 1, column: 2, byte: bytes[0] });
    }
  });
});
