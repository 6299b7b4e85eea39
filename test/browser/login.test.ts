/**
 * The whole sign-in in a real browser (Debian's chromium driven by playwright-core), against
 * the app on a real port and database of its own (a single partner, so the login page is
 * branded: spec 1.6.2, 1.9.2), with the in-process OpenID Provider as the IdP:
 *  - the partner branding and the partner sign-in button, the password form behind a toggle
 *    because the partner provider enforces SSO;
 *  - email discovery offering the organization's provider, the OP's own login form, and the
 *    return with #ssoCode= to a signed-in landing page;
 *  - the password path with an authenticator code;
 *  - readable sentences for rejected callbacks;
 *  - a phone-width layout.
 * Screenshots go to test/browser/artifacts/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { MfaService } from '../../src/modules/auth/mfa.service';
import { PASSWORD, TOTP_SECRET, tenantFixture, uniq } from '../factories/tenant.factory';
import { startOidcOp, OidcOpHandle } from '../support/idp/oidc-op';
import { ensureChromium } from './support/chromium';
import { IsolatedApp, startIsolatedApp } from './support/isolated-app';

jest.setTimeout(120_000);

const ARTIFACTS = join(__dirname, 'artifacts');
const ACCENT = '#0f766e';
const HEADLINE = 'Acme IT service desk: sign in to manage your devices';
const PARTNER_PROVIDER = 'Acme Workforce ID';
const ORG_PROVIDER = 'Example Identity';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 375, height: 740 };

const chrome = ensureChromium();
if (!chrome.ok) console.warn(`[browser] login tests skipped: ${chrome.reason}`);
const describeInBrowser = chrome.ok ? describe : describe.skip;

/** The element's text once it is shown (the pages fill an element before they unhide it). */
async function visibleText(locator: Locator): Promise<string> {
  await locator.waitFor({ state: 'visible' });
  return ((await locator.textContent()) ?? '').trim();
}

const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? null);

function rgb(hex: string): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}

describeInBrowser('sign-in in a real browser', () => {
  let browser: Browser;
  let app: IsolatedApp;
  let op: OidcOpHandle;
  let ids: Record<string, string>;
  let f: ReturnType<typeof tenantFixture>;
  let annEmail: string;
  const contexts: BrowserContext[] = [];

  async function api(method: string, path: string, token: string, body?: unknown): Promise<Record<string, any>> {
    const res = await fetch(`${app.baseUrl}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, any>;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  /** A fresh browser context (no cookies, no storage) that can reach only loopback hosts. */
  async function newPage(viewport = DESKTOP): Promise<Page> {
    const context = await browser.newContext({ viewport, locale: 'en-US' });
    contexts.push(context);
    // The OP's dev pages import a web font; nothing here may leave the machine.
    await context.route(
      (url) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost',
      (route) => route.abort(),
    );
    return context.newPage();
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  /** A real PNG logo, drawn by the browser itself. */
  async function drawLogo(): Promise<string> {
    const page = await newPage({ width: 400, height: 200 });
    await page.setContent(
      `<div id="logo" style="display:inline-flex;align-items:center;gap:10px;padding:8px 14px;font:700 30px sans-serif;color:${ACCENT}">` +
        `<span style="display:inline-block;width:38px;height:38px;border-radius:50%;background:${ACCENT}"></span>Acme IT</div>`,
    );
    return `data:image/png;base64,${(await page.locator('#logo').screenshot()).toString('base64')}`;
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // Three independent starts (a browser, the OP's child process, the app on its own database) at once;
    // all of them settle before a failure is thrown, so afterAll stops whichever did start.
    const started = await Promise.allSettled([
      chromium
        .launch({
          executablePath: chrome.ok ? chrome.path : undefined,
          headless: true,
          // launch() gives every run a fresh temporary user-data-dir of its own.
          args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        })
        .then((b) => (browser = b)),
      startOidcOp().then((o) => (op = o)),
      startIsolatedApp().then((a) => (app = a)),
    ]);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;

    const label = uniq('web');
    const ssoDomain = `sso-${label}.example`;
    annEmail = `ann@${ssoDomain}`;
    f = tenantFixture(label);
    f.users!.push({ key: 'ann', email: annEmail, name: 'Ann Example', memberships: [{ organization: 'orgB', role: 'adminRoleB' }] });
    ids = await app.seed(f);

    const tech = await app.token(ids.tech, { mfa: true });
    await api('PUT', '/partners/me/login-branding', tech, { logoUrl: await drawLogo(), accentColor: ACCENT, headline: HEADLINE });

    const callback = `${app.baseUrl}/api/v1/sso/callback`;
    await op.addClient({ client_id: 'rmm-org', client_secret: 'org-client-secret', redirect_uris: [callback] });
    await op.addClient({ client_id: 'rmm-partner', client_secret: 'partner-client-secret', redirect_uris: [callback] });
    await op.setAccount('ann', { email: annEmail, email_verified: true, name: 'Ann Example' });
    await op.setAccount('stranger', { email: `stranger@${ssoDomain}`, email_verified: true, name: 'Stranger' });

    const common = { type: 'oidc', issuer: op.issuer, enforceSSO: true, autoProvision: false };
    const orgProvider = await api('POST', '/sso/providers', tech, { ...common, ownerScope: 'organization', orgId: ids.orgB, name: ORG_PROVIDER, clientId: 'rmm-org', clientSecret: 'org-client-secret' });
    await api('POST', `/sso/providers/${orgProvider.provider.id}/status`, tech, { status: 'active' });
    const partnerProvider = await api('POST', '/sso/providers', tech, { ...common, ownerScope: 'partner', name: PARTNER_PROVIDER, clientId: 'rmm-partner', clientSecret: 'partner-client-secret' });
    await api('POST', `/sso/providers/${partnerProvider.provider.id}/status`, tech, { status: 'active' });
    // DNS verification of the domain is not what is under test here.
    await app.ownerQuery(
      `INSERT INTO sso_verified_domains (org_id, domain, token, verified, verified_at, last_seen_at) VALUES ($1, $2, 'test-token', true, now(), now())`,
      [ids.orgB, ssoDomain],
    );
  });

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await op?.stop();
    await app?.close();
  });

  it('shows the partner branding and sign-in button, with the password form behind a toggle', async () => {
    const page = await newPage();
    await page.goto(`${app.baseUrl}/login`);
    expect(await visibleText(page.locator('#brand-headline'))).toBe(HEADLINE);
    const logoWidth = await page.locator('#brand-logo').evaluate((img: HTMLImageElement) => img.naturalWidth);
    expect(logoWidth).toBeGreaterThan(0);

    const partnerButton = page.getByRole('link', { name: `Sign in with ${PARTNER_PROVIDER}` });
    await partnerButton.waitFor();
    // what is painted, not only the accessible name: a flex layout once swallowed the space
    expect(await partnerButton.innerText()).toBe(`Sign in with ${PARTNER_PROVIDER}`);
    expect(await partnerButton.getAttribute('href')).toMatch(new RegExp(`^/api/v1/sso/login/partner/${ids.partner}\\?.*redirect=%2Flogin`));
    const colours = await partnerButton.evaluate((a) => ({ bg: getComputedStyle(a).backgroundColor, fg: getComputedStyle(a).color }));
    expect(colours).toEqual({ bg: rgb(ACCENT), fg: 'rgb(255, 255, 255)' });

    // enforced partner SSO: the password form is one click away, not gone
    expect(await page.locator('#password-area').isHidden()).toBe(true);
    const toggle = page.getByRole('button', { name: 'Sign in with email and password' });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await shot(page, 'login-branded-desktop');
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await focusedId(page)).toBe('email');
    await shot(page, 'login-branded-password-open-desktop');
  });

  it("signs in with the organization's provider found by email discovery, at the IdP's own login form", async () => {
    const page = await newPage();
    await page.goto(`${app.baseUrl}/login`);
    await page.getByRole('button', { name: 'Sign in with email and password' }).click();
    await page.getByLabel('Email address').fill(annEmail);
    await page.getByRole('button', { name: 'Continue' }).click();

    const ssoButton = page.getByRole('link', { name: `Sign in with ${ORG_PROVIDER}` });
    await ssoButton.waitFor();
    expect(await ssoButton.innerText()).toBe(`Sign in with ${ORG_PROVIDER}`);
    expect(await page.getByLabel('Password').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Sign in with password instead' }).waitFor();
    await shot(page, 'login-sso-discovered-desktop');

    await ssoButton.click();
    await page.waitForURL(`${op.issuer}/interaction/**`, { waitUntil: 'domcontentloaded' });
    await page.locator('input[name="login"]').fill('ann');
    await page.locator('input[name="password"]').fill('anything');
    await shot(page, 'idp-login-form');
    await page.locator('button[type="submit"]').click();

    await page.waitForURL(`${app.baseUrl}/app`);
    expect(await visibleText(page.locator('#who-email'))).toBe(annEmail);
    await shot(page, 'signed-in-sso-desktop');
  });

  it('signs in with a password and an authenticator code', async () => {
    const page = await newPage();
    await page.goto(`${app.baseUrl}/login`);
    await page.getByRole('button', { name: 'Sign in with email and password' }).click();
    await page.getByLabel('Email address').fill(f.emails.adminA);
    await page.getByRole('button', { name: 'Continue' }).click();

    const password = page.getByLabel('Password');
    await password.waitFor();
    expect(await focusedId(page)).toBe('password');
    await password.fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    expect(await visibleText(page.getByRole('alert'))).toBe('The email address or password is not correct.');
    expect(await password.getAttribute('aria-invalid')).toBe('true');
    await shot(page, 'login-wrong-password-desktop');

    await password.fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const code = page.getByLabel('Authentication code');
    await code.waitFor();
    expect(await focusedId(page)).toBe('mfa-code');
    await shot(page, 'login-mfa-step-desktop');
    await code.fill(MfaService.currentCode(TOTP_SECRET));
    await page.getByRole('button', { name: 'Verify' }).click();

    await page.waitForURL(`${app.baseUrl}/app`);
    expect(await visibleText(page.locator('#who-email'))).toBe(f.emails.adminA);
    expect(await visibleText(page.locator('#who-mfa'))).toBe('Verified for this session');
    await shot(page, 'signed-in-password-desktop');

    // where self-service linking sends the browser back (docs/sso-login.md)
    await page.goto(`${app.baseUrl}/settings/profile?ssoLinkError=email_mismatch`);
    expect(await visibleText(page.getByRole('alert'))).toBe('The identity provider account has a different email address from yours, so it was not linked.');
    expect(await visibleText(page.locator('#who-email'))).toBe(f.emails.adminA);
  });

  it('tells a partner sign-in by an unknown identity to ask for an invite', async () => {
    const page = await newPage();
    await page.goto(`${app.baseUrl}/login`);
    await page.getByRole('link', { name: `Sign in with ${PARTNER_PROVIDER}` }).click();
    await page.waitForURL(`${op.issuer}/interaction/**`, { waitUntil: 'domcontentloaded' });
    await page.locator('input[name="login"]').fill('stranger');
    await page.locator('input[name="password"]').fill('anything');
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(`${app.baseUrl}/login?error=invite_required`);
    expect(await visibleText(page.getByRole('alert'))).toBe('Your identity is not recognised here. Ask your administrator to invite you before signing in.');
  });

  it('shows a rejected callback as a sentence, and an unknown code as a generic one', async () => {
    const page = await newPage(PHONE);
    await page.goto(`${app.baseUrl}/login?error=invite_required`);
    expect(await visibleText(page.getByRole('alert'))).toBe('Your identity is not recognised here. Ask your administrator to invite you before signing in.');
    await shot(page, 'login-error-invite-required-phone');
    await page.goto(`${app.baseUrl}/login?error=${encodeURIComponent('<b>raw</b>')}`);
    expect(await visibleText(page.getByRole('alert'))).toBe('Sign-in did not work. Please try again.');
  });

  it('refuses a used or made-up exchange code with a sentence', async () => {
    const page = await newPage();
    await page.goto(`${app.baseUrl}/login#ssoCode=made-up-code`);
    expect(await visibleText(page.getByRole('alert'))).toBe('This sign-in link has expired or was already used. Please sign in again.');
    expect(new URL(page.url()).hash).toBe('');
  });

  it('fits a 375 px phone screen without sideways scrolling', async () => {
    const page = await newPage(PHONE);
    await page.goto(`${app.baseUrl}/login`);
    const partnerButton = page.getByRole('link', { name: `Sign in with ${PARTNER_PROVIDER}` });
    await partnerButton.waitFor();
    await page.getByRole('button', { name: 'Sign in with email and password' }).click();
    const layout = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      button: document.getElementById('partner-sso-button')!.getBoundingClientRect().width,
      input: document.getElementById('email')!.getBoundingClientRect().width,
    }));
    expect(layout.scrollWidth).toBeLessThanOrEqual(PHONE.width);
    expect(layout.button).toBeGreaterThan(300);
    expect(layout.input).toBeGreaterThan(300);
    await shot(page, 'login-branded-phone');
  });
});
