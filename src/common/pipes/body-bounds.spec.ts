import { BODY_BOUNDS, bodyBoundsProblem } from './body-bounds';

const nest = (levels: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
};

describe('bodyBoundsProblem', () => {
  it('accepts a body exactly at the depth bound and refuses one level more', () => {
    expect(bodyBoundsProblem(nest(BODY_BOUNDS.depth))).toBeNull();
    expect(bodyBoundsProblem({ a: nest(BODY_BOUNDS.depth - 1) })).toBeNull();
    expect(bodyBoundsProblem({ a: nest(BODY_BOUNDS.depth) })).toMatch(/deeper than 32 levels/);
  });

  it('walks a structure 100,000 levels deep without overflowing the stack', () => {
    expect(bodyBoundsProblem(JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)))).toMatch(/deeper/);
  });

  it('counts object keys and array items over the whole body', () => {
    const items = (n: number) => Array.from({ length: n }, () => 0);
    expect(bodyBoundsProblem({ a: items(BODY_BOUNDS.members - 2), b: 1 })).toBeNull();
    expect(bodyBoundsProblem({ a: items(BODY_BOUNDS.members - 1), b: 1 })).toMatch(/more than 10000 members/);
    expect(bodyBoundsProblem(Object.fromEntries(items(BODY_BOUNDS.members + 1).map((_, i) => [`k${i}`, i])))).toMatch(/members/);
    expect(bodyBoundsProblem({ a: items(50) }, { depth: 32, members: 20 })).toMatch(/more than 20 members/);
  });

  it('refuses an unpaired surrogate in a value or a key, and accepts paired ones', () => {
    expect(bodyBoundsProblem(JSON.parse('{"email":"\\ud800@example.com"}'))).toMatch(/not valid Unicode/);
    expect(bodyBoundsProblem(JSON.parse('{"a":[["x\\udc00"]]}'))).toMatch(/not valid Unicode/);
    expect(bodyBoundsProblem(JSON.parse('{"\\udbff":1}'))).toMatch(/not valid Unicode/);
    expect(bodyBoundsProblem({ name: 'Zoë 😀 名前' })).toBeNull();
  });

  it('has nothing to say about scalars and empty bodies', () => {
    for (const v of [undefined, null, 0, 'text', true, {}, []]) expect(bodyBoundsProblem(v)).toBeNull();
  });
});
