/**
 * A small RFC 6265 cookie jar for browserless flows over the global fetch: it keeps cookies per
 * host and path, honours Max-Age/Expires deletion, and sends Secure cookies only over https or
 * to a loopback host (as browsers treat localhost as a secure context). SameSite is not
 * enforced: a test drives one "browser" and decides itself which requests it makes.
 *
 *   const jar = new CookieJar();
 *   const res = await fetch(url, { redirect: 'manual', headers: jar.requestHeaders(url) });
 *   jar.storeFrom(url, res);
 *   jar.get('svc_sso_state', url);
 */
export interface StoredCookie {
  name: string;
  value: string;
  domain: string;
  hostOnly: boolean;
  path: string;
  secure: boolean;
  httpOnly: boolean;
  sameSite: string | null;
  /** Epoch milliseconds; null for a session cookie. */
  expiresAt: number | null;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export class CookieJar {
  private cookies: StoredCookie[] = [];

  /** Stores every Set-Cookie header of a response to a request for `url`. */
  storeFrom(url: string | URL, response: { headers: Headers }): void {
    for (const header of response.headers.getSetCookie()) {
      this.setCookie(url, header);
    }
  }

  setCookie(url: string | URL, setCookieHeader: string): void {
    const requestUrl = new URL(url);
    const parsed = parseSetCookie(setCookieHeader, requestUrl);
    if (!parsed) {
      return;
    }
    this.cookies = this.cookies.filter(
      (cookie) => !(cookie.name === parsed.name && cookie.domain === parsed.domain && cookie.path === parsed.path),
    );
    if (parsed.expiresAt === null || parsed.expiresAt > Date.now()) {
      this.cookies.push(parsed);
    }
  }

  /** The cookies a browser would send to `url`, longest path first. */
  matching(url: string | URL): StoredCookie[] {
    const target = new URL(url);
    const now = Date.now();
    this.cookies = this.cookies.filter((cookie) => cookie.expiresAt === null || cookie.expiresAt > now);
    return this.cookies
      .filter((cookie) => domainMatches(cookie, target.hostname) && pathMatches(cookie.path, target.pathname))
      .filter((cookie) => !cookie.secure || target.protocol === 'https:' || LOOPBACK_HOSTS.has(target.hostname))
      .sort((a, b) => b.path.length - a.path.length);
  }

  /** The Cookie header value for `url`, or undefined when no cookie applies. */
  cookieHeader(url: string | URL): string | undefined {
    const cookies = this.matching(url);
    return cookies.length > 0 ? cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ') : undefined;
  }

  /** Headers to pass to fetch: `{ cookie }` when any cookie applies, otherwise empty. */
  requestHeaders(url: string | URL): Record<string, string> {
    const cookie = this.cookieHeader(url);
    return cookie ? { cookie } : {};
  }

  /** The value of cookie `name`; restricted to those sent to `url` when given. */
  get(name: string, url?: string | URL): string | undefined {
    const pool = url ? this.matching(url) : this.cookies;
    return pool.find((cookie) => cookie.name === name)?.value;
  }

  all(): StoredCookie[] {
    return [...this.cookies];
  }
}

function parseSetCookie(header: string, requestUrl: URL): StoredCookie | null {
  const [pair, ...attributes] = header.split(';');
  const eq = pair.indexOf('=');
  if (eq <= 0) {
    return null;
  }
  const cookie: StoredCookie = {
    name: pair.slice(0, eq).trim(),
    value: pair.slice(eq + 1).trim(),
    domain: requestUrl.hostname,
    hostOnly: true,
    path: defaultPath(requestUrl.pathname),
    secure: false,
    httpOnly: false,
    sameSite: null,
    expiresAt: null,
  };
  let maxAgeSeen = false;
  for (const attribute of attributes) {
    const index = attribute.indexOf('=');
    const key = (index === -1 ? attribute : attribute.slice(0, index)).trim().toLowerCase();
    const value = index === -1 ? '' : attribute.slice(index + 1).trim();
    switch (key) {
      case 'path':
        cookie.path = value.startsWith('/') ? value : defaultPath(requestUrl.pathname);
        break;
      case 'domain': {
        const domain = value.replace(/^\./, '').toLowerCase();
        if (!domain) {
          break;
        }
        if (requestUrl.hostname !== domain && !requestUrl.hostname.endsWith(`.${domain}`)) {
          return null;
        }
        cookie.domain = domain;
        cookie.hostOnly = false;
        break;
      }
      case 'max-age': {
        const seconds = Number(value);
        if (/^-?\d+$/.test(value)) {
          cookie.expiresAt = Date.now() + seconds * 1000;
          maxAgeSeen = true;
        }
        break;
      }
      case 'expires': {
        const time = Date.parse(value);
        if (!maxAgeSeen && !Number.isNaN(time)) {
          cookie.expiresAt = time;
        }
        break;
      }
      case 'secure':
        cookie.secure = true;
        break;
      case 'httponly':
        cookie.httpOnly = true;
        break;
      case 'samesite':
        cookie.sameSite = value;
        break;
    }
  }
  return cookie;
}

function defaultPath(requestPath: string): string {
  if (!requestPath.startsWith('/') || requestPath.lastIndexOf('/') === 0) {
    return '/';
  }
  return requestPath.slice(0, requestPath.lastIndexOf('/'));
}

function domainMatches(cookie: StoredCookie, hostname: string): boolean {
  return cookie.hostOnly ? hostname === cookie.domain : hostname === cookie.domain || hostname.endsWith(`.${cookie.domain}`);
}

function pathMatches(cookiePath: string, requestPath: string): boolean {
  if (requestPath === cookiePath) {
    return true;
  }
  return requestPath.startsWith(cookiePath) && (cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/');
}
