import { validate } from 'class-validator';
import { IsText } from './text.util';

class Named {
  @IsText(1, 5) name: unknown;
}

const errorsFor = async (name: unknown) => (await validate(Object.assign(new Named(), { name }))).flatMap((e) => Object.keys(e.constraints ?? {}));

describe('IsText', () => {
  it('accepts strings within the length bounds', async () => {
    expect(await errorsFor('a')).toEqual([]);
    expect(await errorsFor('abcde')).toEqual([]);
  });

  it('rejects strings outside the bounds and values that are not strings', async () => {
    expect(await errorsFor('')).toContain('isLength');
    expect(await errorsFor('abcdef')).toContain('isLength');
    expect(await errorsFor(5)).toContain('isString');
  });

  it('rejects the NUL character, which PostgreSQL text cannot hold', async () => {
    expect(await errorsFor('a\u0000b')).toEqual(['notContains']);
  });
});
