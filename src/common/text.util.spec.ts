import { validate } from 'class-validator';
import { NoNul } from './text.util';

class Named {
  @NoNul() name: unknown;
}

const errorsFor = async (name: unknown) => (await validate(Object.assign(new Named(), { name }))).flatMap((e) => Object.keys(e.constraints ?? {}));

describe('NoNul', () => {
  it('accepts ordinary text, including other control characters', async () => {
    expect(await errorsFor('plain')).toEqual([]);
    expect(await errorsFor('tab\there')).toEqual([]);
  });

  it('rejects the NUL character, which PostgreSQL text cannot hold', async () => {
    expect(await errorsFor('a\u0000b')).toEqual(['notContains']);
  });
});
