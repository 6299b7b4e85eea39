import { LOGO_MAX_BYTES, LOGO_URL_MAX_LENGTH, logoUrlProblem, sniffImageType } from './logo.util';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const JPEG = Buffer.from('ffd8ffe000104a464946', 'hex');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 ')]);
const dataUri = (type: string, bytes: Buffer) => `data:image/${type};base64,${bytes.toString('base64')}`;
const padded = (head: Buffer, size: number) => Buffer.concat([head, Buffer.alloc(size - head.length, 7)]);

describe('sniffImageType', () => {
  it('recognises PNG, JPEG and WebP signatures', () => {
    expect(sniffImageType(PNG)).toBe('png');
    expect(sniffImageType(JPEG)).toBe('jpeg');
    expect(sniffImageType(WEBP)).toBe('webp');
  });

  it('recognises neither a RIFF file that is not WebP, nor text, nor a truncated signature', () => {
    expect(sniffImageType(Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE')]))).toBeNull();
    expect(sniffImageType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(sniffImageType(PNG.subarray(0, 7))).toBeNull();
  });
});

describe('logoUrlProblem', () => {
  it('accepts an https URL and data URIs whose bytes match their declared type', () => {
    expect(logoUrlProblem('https://cdn.example.com/logo.png?v=2')).toBeNull();
    expect(logoUrlProblem(dataUri('png', PNG))).toBeNull();
    expect(logoUrlProblem(dataUri('jpeg', JPEG))).toBeNull();
    expect(logoUrlProblem(dataUri('webp', WEBP))).toBeNull();
  });

  it('refuses plain http, other schemes and credentials in the URL', () => {
    expect(logoUrlProblem('http://cdn.example.com/logo.png')).toMatch(/https/);
    expect(logoUrlProblem('javascript:alert(1)')).toMatch(/https:\/\/ URL or a base64 data URI/);
    expect(logoUrlProblem('//cdn.example.com/logo.png')).not.toBeNull();
    expect(logoUrlProblem('https://user:pw@cdn.example.com/logo.png')).toMatch(/credentials/);
    expect(logoUrlProblem('https://cdn.example.com/a logo.png')).toMatch(/spaces/);
  });

  it('accepts a URL of exactly the maximum length and refuses one character more', () => {
    const base = 'https://cdn.example.com/';
    const exact = base + 'a'.repeat(LOGO_URL_MAX_LENGTH - base.length);
    expect(logoUrlProblem(exact)).toBeNull();
    expect(logoUrlProblem(exact + 'a')).toMatch(/at most 2048/);
  });

  it('refuses SVG data URIs whatever their content', () => {
    expect(logoUrlProblem(dataUri('svg+xml', Buffer.from('<svg/>')))).toMatch(/SVG/);
    expect(logoUrlProblem(dataUri('svg+xml', PNG))).toMatch(/SVG/);
  });

  it('refuses a data URI whose bytes are another type than declared', () => {
    expect(logoUrlProblem(dataUri('png', JPEG))).toBe('logoUrl data is not a PNG image');
    expect(logoUrlProblem(dataUri('jpeg', Buffer.from('not an image at all')))).toBe('logoUrl data is not a JPEG image');
    expect(logoUrlProblem(dataUri('webp', PNG))).toBe('logoUrl data is not a WEBP image');
  });

  it('refuses malformed data URIs: not base64, empty, other media types, upper-case type', () => {
    expect(logoUrlProblem('data:image/png;base64,@@@@')).toMatch(/base64/);
    expect(logoUrlProblem('data:image/png;base64,')).toMatch(/base64/);
    expect(logoUrlProblem('data:image/gif;base64,R0lGODlh')).toMatch(/data:image\/png/);
    expect(logoUrlProblem(`data:image/PNG;base64,${PNG.toString('base64')}`)).toMatch(/data:image\/png/);
    expect(logoUrlProblem(`data:image/png,${PNG.toString('latin1')}`)).toMatch(/;base64,/);
  });

  it('accepts an image of exactly the size cap and refuses one byte more', () => {
    expect(logoUrlProblem(dataUri('png', padded(PNG, LOGO_MAX_BYTES)))).toBeNull();
    expect(logoUrlProblem(dataUri('png', padded(PNG, LOGO_MAX_BYTES + 1)))).toMatch(/at most 256 KiB/);
  });

  it('names the field it was given', () => {
    expect(logoUrlProblem('http://x.example', 'logo')).toBe('logo must use https://, not http://');
  });
});
