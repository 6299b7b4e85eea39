/** Column size of sso_sessions.redirect_url. */
export const MAX_REDIRECT_PATH_LENGTH = 500;

const BASE = 'http://service.invalid';

/**
 * The post-login path a login start may carry (`?redirect=`), reduced to a same-origin path
 * (CONTRACT.md §3). Anything that could leave the origin once a browser resolves it (a scheme,
 * `//host`, a backslash that browsers read as a slash, control characters) becomes `/`. The
 * fragment is dropped because the exchange code travels in it.
 */
export function safeRedirectPath(input: unknown): string {
  if (typeof input !== 'string' || input === '' || input.length > MAX_REDIRECT_PATH_LENGTH) return '/';
  if (!input.startsWith('/') || input.startsWith('//')) return '/';
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(input)) return '/';
  let url: URL;
  try {
    url = new URL(input, BASE);
  } catch {
    return '/';
  }
  if (url.origin !== BASE || !url.pathname.startsWith('/')) return '/';
  const path = `${url.pathname}${url.search}`;
  return path.length > MAX_REDIRECT_PATH_LENGTH ? '/' : path;
}
