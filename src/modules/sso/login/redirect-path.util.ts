/** Column size of sso_sessions.redirect_url. */
export const MAX_REDIRECT_PATH_LENGTH = 500;

const BASE = 'http://service.invalid';
const BASE_ORIGIN = new URL(BASE).origin;

// Backslashes (browsers read them as slashes) and ASCII controls (browsers strip tabs and
// newlines anywhere in a URL). A re-serialised path carries no raw space either.
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARACTER = /[\\\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const UNSAFE_IN_CANONICAL = /[\\\u0000-\u0020\u007f]/;
/** A path-absolute reference: one slash, then anything but a second slash or a backslash. */
const PATH_ABSOLUTE = /^\/(?![/\\])/;

/**
 * The post-login target a login start may carry (`?redirect=`), as a same-origin path
 * (docs/sso-login.md), or `/`. The exchange code is appended to it as a fragment, so whatever
 * leaves the origin hands the sign-in to someone else: every SSO flow builds its final
 * Location through this one function.
 *
 * The input is parsed with the WHATWG URL parser (the one browsers use, so dot segments,
 * `%2e`, case and the like are resolved the way the browser will), and the answer is never
 * the input but the path and query re-serialised from the parsed URL. That answer is checked
 * again as the browser would read it: a path-absolute reference (not `//host`, not `/\host`)
 * with nothing a browser strips or turns into a slash, that parses back to itself on this
 * origin, and that stays on the origin once percent-decoded (for a consumer that decodes
 * before navigating). The fragment is dropped: the exchange code goes there.
 */
export function safeRedirectPath(input: unknown): string {
  if (typeof input !== 'string' || input === '' || input.length > MAX_REDIRECT_PATH_LENGTH) return '/';
  if (!input.startsWith('/') || UNSAFE_CHARACTER.test(input)) return '/';
  const parsed = parseOnOrigin(input);
  if (!parsed) return '/';
  const canonical = `${parsed.pathname}${parsed.search}`;
  return isCanonicalSameOriginPath(canonical) ? canonical : '/';
}

/** The browser's final Location after a sign-in: the stored target, checked again, with the code in the fragment. */
export function signedInLocation(storedTarget: unknown, exchangeCode: string): string {
  return `${safeRedirectPath(storedTarget)}#ssoCode=${exchangeCode}`;
}

/** True when `path` is exactly what safeRedirectPath would answer for it, and not the fallback by accident. */
export function isCanonicalSameOriginPath(path: string): boolean {
  if (path.length > MAX_REDIRECT_PATH_LENGTH || !PATH_ABSOLUTE.test(path) || UNSAFE_IN_CANONICAL.test(path)) return false;
  const again = parseOnOrigin(path);
  if (!again || `${again.pathname}${again.search}` !== path) return false;
  let decoded: string;
  try {
    decoded = decodeURIComponent(again.pathname);
  } catch {
    return false;
  }
  if (!PATH_ABSOLUTE.test(decoded) || UNSAFE_CHARACTER.test(decoded)) return false;
  const decodedUrl = parseOnOrigin(decoded);
  return decodedUrl !== null && PATH_ABSOLUTE.test(decodedUrl.pathname);
}

function parseOnOrigin(reference: string): URL | null {
  let url: URL;
  try {
    url = new URL(reference, BASE);
  } catch {
    return null;
  }
  return url.origin === BASE_ORIGIN && url.username === '' && url.password === '' ? url : null;
}
