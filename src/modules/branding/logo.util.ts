/**
 * Checks of a login logo (spec 2.7): an https URL, or a base64 data URI of a PNG, JPEG or WebP
 * image whose bytes really are that type. The login page renders the logo in an <img>, so an
 * SVG (which can carry script and external references) is refused, as is plain http (mixed
 * content, and a tracking or tampering point on the login page). The limits match the CHECK of
 * partner_login_branding.
 */

/** Decoded size cap of a data URI logo: large enough for a crisp logo, small enough for a public, cached login response. */
export const LOGO_MAX_BYTES = 256 * 1024;
export const LOGO_URL_MAX_LENGTH = 2048;

export type LogoImageType = 'png' | 'jpeg' | 'webp';

const DATA_URI = /^data:image\/(png|jpeg|webp);base64,(.*)$/s;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MAX_BASE64_LENGTH = Math.ceil(LOGO_MAX_BYTES / 3) * 4;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The image type the bytes' signature shows, or null when it is none of the accepted ones. */
export function sniffImageType(bytes: Buffer): LogoImageType | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return null;
}

/** Why `value` is not an acceptable logo, as a sentence naming the field; null when it is. */
export function logoUrlProblem(value: string, field = 'logoUrl'): string | null {
  if (value.startsWith('data:')) return dataUriProblem(value, field);
  if (/^http:\/\//i.test(value)) return `${field} must use https://, not http://`;
  if (!value.startsWith('https://')) return `${field} must be an https:// URL or a base64 data URI of a PNG, JPEG or WebP image`;
  if (value.length > LOGO_URL_MAX_LENGTH) return `${field} must be at most ${LOGO_URL_MAX_LENGTH} characters`;
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return `${field} must not contain spaces or control characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${field} is not a valid URL`;
  }
  if (!url.hostname) return `${field} is not a valid URL`;
  if (url.username || url.password) return `${field} must not contain credentials`;
  return null;
}

function dataUriProblem(value: string, field: string): string | null {
  if (/^data:image\/svg/i.test(value)) return `${field} must not be an SVG image; use PNG, JPEG or WebP`;
  const match = DATA_URI.exec(value);
  if (!match) return `${field} data URI must be data:image/png, data:image/jpeg or data:image/webp with ;base64,`;
  const [, declared, payload] = match;
  if (payload.length > MAX_BASE64_LENGTH) return `${field} image must be at most ${LOGO_MAX_BYTES / 1024} KiB`;
  if (!payload || !BASE64.test(payload)) return `${field} data URI is not valid base64`;
  const bytes = Buffer.from(payload, 'base64');
  if (bytes.length > LOGO_MAX_BYTES) return `${field} image must be at most ${LOGO_MAX_BYTES / 1024} KiB`;
  const actual = sniffImageType(bytes);
  if (actual !== declared) return `${field} data is not a ${declared.toUpperCase()} image`;
  return null;
}
