import { domainOf, normaliseDomain } from './domain.util';

describe('normaliseDomain', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Example.COM  ', 'example.com'],
    ['example.com.', 'example.com'],
    ['https://example.com', 'example.com'],
    ['HTTP://Example.com/login?next=/#top', 'example.com'],
    ['https://user:secret@example.com:8443/path', 'example.com'],
    ['example.com:443', 'example.com'],
    ['*.example.com', 'example.com'],
    ['*.Sub.Example.com.', 'sub.example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['BÜCHER.example', 'xn--bcher-kva.example'],
    ['münchen.de', 'xn--mnchen-3ya.de'],
    ['xn--mnchen-3ya.de', 'xn--mnchen-3ya.de'],
    ['例え.テスト', 'xn--r8jz45g.xn--zckzah'],
    ['a-b.c-d.example', 'a-b.c-d.example'],
    ['123.example.com', '123.example.com'],
  ])('normalises %p to %p', (input, expected) => {
    expect(normaliseDomain(input)).toBe(expected);
  });

  it.each([
    ['', 'empty'],
    ['   ', 'blank'],
    ['localhost', 'a single label'],
    ['com.', 'a single label with a trailing dot'],
    ['10.0.0.1', 'an IPv4 literal'],
    ['https://127.0.0.1:8080/', 'an IPv4 literal in a URL'],
    ['0x7f.1', 'a hex IPv4 form'],
    ['1.2.3', 'a short IPv4 form'],
    ['[::1]', 'an IPv6 literal'],
    ['https://[fd00::1]/', 'an IPv6 literal in a URL'],
    ['::1', 'a bare IPv6 literal'],
    ['example.com..', 'an empty label'],
    ['.example.com', 'a leading empty label'],
    ['a..example.com', 'an empty label in the middle'],
    ['exa mple.com', 'a space'],
    ['under_score.example.com', 'an underscore'],
    ['-lead.example.com', 'a leading hyphen'],
    ['trail-.example.com', 'a trailing hyphen'],
    ['*.*.example.com', 'a nested wildcard'],
    ['foo*.example.com', 'a wildcard inside a label'],
    [`${'a'.repeat(64)}.example.com`, 'a label of 64 characters'],
    [`${'a.'.repeat(126)}example`, 'a name of more than 253 characters'],
    ['example.123', 'a numeric top-level label'],
    ['xn--zz.com', 'invalid punycode'],
  ])('refuses %p (%s)', (input) => {
    expect(normaliseDomain(input)).toBeNull();
  });

  it('accepts a label of exactly 63 characters and a name of exactly 253', () => {
    const label63 = 'a'.repeat(63);
    const name253 = `${label63}.${label63}.${label63}.${'b'.repeat(61)}`;

    expect(normaliseDomain(`${label63}.example.com`)).toBe(`${label63}.example.com`);
    expect(name253).toHaveLength(253);
    expect(normaliseDomain(name253)).toBe(name253);
    expect(normaliseDomain(`c${name253}`)).toBeNull();
  });

  it('refuses input that is not a string', () => {
    expect(normaliseDomain(42 as unknown as string)).toBeNull();
  });
});

describe('domainOf', () => {
  it.each([
    ['ann@Example.COM', 'example.com'],
    [' ann@example.com. ', 'example.com'],
    ['"odd@local"@example.com', 'example.com'],
    ['ann@bücher.example', 'xn--bcher-kva.example'],
  ])('finds the domain of %p', (email, expected) => {
    expect(domainOf(email)).toBe(expected);
  });

  it.each([
    ['example.com'],
    ['@example.com'],
    ['ann@'],
    ['ann@localhost'],
    ['ann@[10.0.0.1]'],
    ['ann@example.com:25'],
    ['ann@example.com/x'],
    ['ann@*.example.com'],
    ['ann@exa mple.com'],
  ])('finds no domain in %p', (email) => {
    expect(domainOf(email)).toBeNull();
  });
});
