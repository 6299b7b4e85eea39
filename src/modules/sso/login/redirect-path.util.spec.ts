import { MAX_REDIRECT_PATH_LENGTH, safeRedirectPath } from './redirect-path.util';

describe('safeRedirectPath', () => {
  it('keeps a same-origin path with its query', () => {
    expect(safeRedirectPath('/devices?site=a1&page=2')).toBe('/devices?site=a1&page=2');
  });

  it('drops the fragment, where the exchange code will go', () => {
    expect(safeRedirectPath('/devices#section')).toBe('/devices');
  });

  it.each([
    ['an absolute URL', 'https://evil.example/x'],
    ['a protocol-relative URL', '//evil.example/x'],
    ['a backslash that browsers read as a slash', '/\\evil.example'],
    ['a relative path', 'devices'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a tab inside the host part', '/\t/evil.example'],
    ['a newline', '/devices\nSet-Cookie: x=1'],
    ['an empty string', ''],
  ])('turns %s into /', (_label, input) => {
    expect(safeRedirectPath(input)).toBe('/');
  });

  it('turns anything that is not a string into /', () => {
    expect(safeRedirectPath(['/a', '/b'])).toBe('/');
    expect(safeRedirectPath(undefined)).toBe('/');
  });

  it('normalises dot segments without leaving the origin', () => {
    expect(safeRedirectPath('/a/../../b')).toBe('/b');
  });

  it('accepts a path of exactly the column size and refuses one character more', () => {
    const exact = `/${'a'.repeat(MAX_REDIRECT_PATH_LENGTH - 1)}`;
    expect(safeRedirectPath(exact)).toBe(exact);
    expect(safeRedirectPath(`${exact}a`)).toBe('/');
  });
});
