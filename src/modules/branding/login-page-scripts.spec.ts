/**
 * The pure parts of the login page's scripts (src/web), loaded the way Node loads them: the
 * contrast choice for the partner's accent colour and the sentences for every code the
 * service redirects back with.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Contrast = require('../../web/contrast.js') as {
  MIN_TEXT_RATIO: number;
  isHexColour(v: unknown): boolean;
  luminance(hex: string): number;
  contrastRatio(a: string, b: string): number;
  readableTextOn(background: string): string;
  accentAsText(accent: string, surface: string, fallback: string): string;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Messages = require('../../web/messages.js') as {
  CALLBACK_ERRORS: Record<string, string>;
  LINK_ERRORS: Record<string, string>;
  GENERIC: string;
  callbackError(code: unknown): string;
  linkError(code: unknown): string;
  apiError(code: unknown): string;
};

/** The ?error= codes of the callback and the ?ssoLinkError= codes of linking (docs/sso-login.md, "Redirect codes"). */
const CALLBACK_CODES = [
  'sso_error', 'invalid_callback', 'session_expired', 'sso_config_changed', 'sso_provider_inactive', 'sso_email_unverified',
  'sso_domain_unverified', 'domain_not_allowed', 'user_not_found', 'user_disabled', 'no_org_access', 'invite_required',
  'default_role_required', 'invalid_provider_configuration', 'identity_in_use',
];
const LINK_CODES = ['email_mismatch', 'identity_in_use', 'user_gone', 'session_invalid', 'config_changed'];

describe('accent colour contrast', () => {
  it('computes the WCAG ratios of known pairs', () => {
    expect(Contrast.contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(Contrast.contrastRatio('#ffffff', '#ffffff')).toBeCloseTo(1, 5);
    expect(Contrast.contrastRatio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
    expect(Contrast.luminance('#FFFFFF')).toBeCloseTo(1, 5);
  });

  it('puts white text on dark accents and black text on light ones', () => {
    expect(Contrast.readableTextOn('#1d4ed8')).toBe('#ffffff');
    expect(Contrast.readableTextOn('#000000')).toBe('#ffffff');
    expect(Contrast.readableTextOn('#ffeb3b')).toBe('#000000');
    expect(Contrast.readableTextOn('#ffffff')).toBe('#000000');
  });

  it('reaches at least 4.5:1 for every grey and for a sweep of colours', () => {
    const worst = { ratio: Infinity, colour: '' };
    for (let r = 0; r < 256; r += 17) {
      for (let g = 0; g < 256; g += 17) {
        for (let b = 0; b < 256; b += 17) {
          const colour = '#' + [r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('');
          const ratio = Contrast.contrastRatio(colour, Contrast.readableTextOn(colour));
          if (ratio < worst.ratio) Object.assign(worst, { ratio, colour });
        }
      }
    }
    expect(worst.ratio).toBeGreaterThanOrEqual(Contrast.MIN_TEXT_RATIO);
  });

  it('uses the accent as text on white only when it is readable there', () => {
    expect(Contrast.accentAsText('#1d4ed8', '#ffffff', '#000000')).toBe('#1d4ed8');
    expect(Contrast.accentAsText('#ffeb3b', '#ffffff', '#1d4ed8')).toBe('#1d4ed8');
    expect(Contrast.accentAsText('#777777', '#ffffff', '#1d4ed8')).toBe('#1d4ed8');
    expect(Contrast.accentAsText('#767676', '#ffffff', '#1d4ed8')).toBe('#767676');
  });

  it('recognises only #rrggbb and refuses anything else', () => {
    expect(Contrast.isHexColour('#a1B2c3')).toBe(true);
    for (const v of ['#abc', 'red', '#GGGGGG', null, 42]) expect(Contrast.isHexColour(v)).toBe(false);
    expect(() => Contrast.luminance('#abc')).toThrow(/#rrggbb/);
  });
});

describe('sentences for redirect codes', () => {
  it('has its own readable sentence for every callback error code the service sends', () => {
    for (const code of CALLBACK_CODES) {
      const sentence = Messages.callbackError(code);
      expect(sentence).not.toBe(Messages.GENERIC);
      expect(sentence).toMatch(/^[A-Z].*\.$/);
      expect(sentence).not.toContain('_');
    }
    expect(new Set(CALLBACK_CODES.map((c) => Messages.callbackError(c))).size).toBe(CALLBACK_CODES.length);
    expect(Object.keys(Messages.CALLBACK_ERRORS).sort()).toEqual([...CALLBACK_CODES].sort());
  });

  it('has its own readable sentence for every self-linking error code', () => {
    for (const code of LINK_CODES) {
      expect(Messages.linkError(code)).not.toBe(Messages.GENERIC);
      expect(Messages.linkError(code)).not.toContain('_');
    }
    expect(Object.keys(Messages.LINK_ERRORS).sort()).toEqual([...LINK_CODES].sort());
  });

  it('answers unknown or hostile codes with the generic sentence, never echoing them', () => {
    for (const code of ['', 'toString', '__proto__', '<script>alert(1)</script>', undefined, 42]) {
      expect(Messages.callbackError(code)).toBe(Messages.GENERIC);
      expect(Messages.linkError(code)).toBe(Messages.GENERIC);
      expect(Messages.apiError(code)).toBe(Messages.GENERIC);
    }
  });

  it('words the password path errors for people', () => {
    expect(Messages.apiError('invalid_credentials')).toBe('The email address or password is not correct.');
    expect(Messages.apiError('invalid_exchange_code')).toMatch(/expired or was already used/);
  });
});
