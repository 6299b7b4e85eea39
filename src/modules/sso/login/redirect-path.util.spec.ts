import fc from 'fast-check';
import { isCanonicalSameOriginPath, MAX_REDIRECT_PATH_LENGTH, safeRedirectPath, signedInLocation } from './redirect-path.util';

/** Where the service could be served, and the pages a browser resolves the callback's Location against. */
const SERVICE_URLS = [
  'http://localhost:3000/api/v1/sso/callback',
  'https://rmm.example.com/api/v1/sso/callback',
  'https://rmm.example.com:8443/api/v1/sso/saml/acs',
  'https://rmm.example.com/',
];

/** What the browser does with the Location header: WHATWG URL resolution against the page. */
function landsOnServiceOrigin(location: string): boolean {
  return SERVICE_URLS.every((page) => {
    const resolved = new URL(location, page);
    return resolved.origin === new URL(page).origin && resolved.username === '' && resolved.password === '';
  });
}

/** Pieces attackers combine: separators browsers treat alike, encodings, dot segments, schemes, hosts. */
const PIECES = [
  '/', '//', '\\', '/\\', '\\\\', '.', '..', '/./', '/../', '%2f', '%2F', '%5c', '%5C', '%2e', '%2E', '%2e%2e', '%252f', '%00', '%09',
  '\t', '\n', '\r', ' ', '\u0000', '\u000b', '\u000c', '\u00a0', '\u3000', '\uff0f', '\uff3c', '\u2215', '\u2044', '。',
  ':', '@', '?', '#', '&', '=', ';', 'http:', 'https:', 'HTTPS:', 'hTtP:', 'javascript:', 'data:', 'file:', '//evil.example', 'evil.example',
  'user:pw@', 'localhost', '127.0.0.1', '[::1]', 'devices', 'a', 'b', '%', '%%', '%zz', 'é', '\ud83d\ude00',
];

const attackerInput = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 12 }).map((parts) => parts.join(''));
const pathLikeInput = attackerInput.map((s) => `/${s}`);

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
    ['a scheme-relative https URL without slashes', 'https:evil.example'],
    ['an upper-case scheme', 'HTTPS://evil.example'],
    ['two backslashes', '\\\\evil.example'],
  ])('turns %s into /', (_label, input) => {
    expect(safeRedirectPath(input)).toBe('/');
  });

  it.each([
    ['a dot segment before the double slash (the reported attack)', '/.//evil.example/steal'],
    ['a parent segment before the double slash', '/..//evil.example/steal'],
    ['parent segments that climb past the root', '/a/../..//evil.example/steal'],
    ['percent-encoded dot segments', '/%2e%2e//evil.example/steal'],
    ['a mixed-case encoded dot segment', '/.%2E//evil.example/steal'],
  ])('never answers a protocol-relative path for %s', (_label, input) => {
    const path = safeRedirectPath(input);
    expect(path).not.toMatch(/^\/[/\\]/);
    expect(landsOnServiceOrigin(path)).toBe(true);
  });

  it.each([
    ['encoded slashes', '/%2F%2Fevil.example'],
    ['encoded backslashes', '/%5Cevil.example'],
    ['encoded slashes after a dot segment', '/.%2e/%2F%2Fevil.example'],
  ])('refuses %s that become a protocol-relative path once decoded', (_label, input) => {
    expect(safeRedirectPath(input)).toBe('/');
  });

  it('turns anything that is not a string into /', () => {
    expect(safeRedirectPath(['/a', '/b'])).toBe('/');
    expect(safeRedirectPath(undefined)).toBe('/');
    expect(safeRedirectPath({ toString: () => '/devices' })).toBe('/');
  });

  it('normalises dot segments without leaving the origin', () => {
    expect(safeRedirectPath('/a/../../b')).toBe('/b');
  });

  it('answers the path re-serialised from the parsed URL, not the input', () => {
    expect(safeRedirectPath('/devices/./list?q=a b')).toBe('/devices/list?q=a%20b');
  });

  it('accepts a path of exactly the column size and refuses one character more', () => {
    const exact = `/${'a'.repeat(MAX_REDIRECT_PATH_LENGTH - 1)}`;
    expect(safeRedirectPath(exact)).toBe(exact);
    expect(safeRedirectPath(`${exact}a`)).toBe('/');
  });

  it('builds the final Location from a stored target by checking it again', () => {
    expect(signedInLocation('/devices?x=1', 'abc')).toBe('/devices?x=1#ssoCode=abc');
    expect(signedInLocation('//evil.example/steal', 'abc')).toBe('/#ssoCode=abc');
    expect(signedInLocation(null, 'abc')).toBe('/#ssoCode=abc');
  });

  describe('properties over generated attacker input', () => {
    const RUNS = { numRuns: 5000 };

    it('every answer, with the code appended, resolves to the service origin in the WHATWG URL parser', () => {
      fc.assert(
        fc.property(fc.oneof(attackerInput, pathLikeInput, fc.string(), fc.webUrl(), fc.webPath()), (input) => {
          const location = signedInLocation(input, 'code');
          expect(landsOnServiceOrigin(location)).toBe(true);
          expect(location).toMatch(/^\/(?![/\\])/);
        }),
        RUNS,
      );
    });

    it('every accepted value is a canonical path: a fixed point that still stays on the origin once percent-decoded', () => {
      fc.assert(
        fc.property(fc.oneof(attackerInput, pathLikeInput, fc.webPath()), (input) => {
          const path = safeRedirectPath(input);
          expect(isCanonicalSameOriginPath(path)).toBe(true);
          expect(safeRedirectPath(path)).toBe(path);
          let decoded = path;
          try {
            decoded = decodeURIComponent(path);
          } catch {
            // Undecodable: a consumer that decodes would fail, not navigate.
          }
          if (!decoded.includes('?')) expect(landsOnServiceOrigin(decoded.replace(/#/g, '%23'))).toBe(true);
        }),
        RUNS,
      );
    });

    it('keeps ordinary paths generated by fast-check', () => {
      fc.assert(
        fc.property(fc.webPath().filter((p) => p.startsWith('/') && !p.startsWith('//') && p.length < 200 && !/%|\/\.\.?(\/|$)/.test(p)), (path) => {
          expect(safeRedirectPath(path)).toBe(new URL(path, 'http://x.invalid').pathname);
        }),
        RUNS,
      );
    });
  });
});
