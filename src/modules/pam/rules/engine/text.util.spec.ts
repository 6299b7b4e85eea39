import { asciiLower, intern } from './text.util';

describe('asciiLower', () => {
  it('lower-cases A to Z', () => {
    expect(asciiLower('C:\\WINDOWS\\Notepad.EXE')).toBe('c:\\windows\\notepad.exe');
  });

  it('leaves every other character alone, including non-ASCII capitals', () => {
    expect(asciiLower('ÉDITEUR İ Σ ß 😀 [@`{')).toBe('Éditeur İ Σ ß 😀 [@`{');
  });

  it('returns the same string when there is nothing to fold', () => {
    const value = 'already lower';
    expect(asciiLower(value)).toBe(value);
    expect(asciiLower('')).toBe('');
  });
});

describe('intern', () => {
  it('returns an equal string for ordinary, numeric and prototype-like keys', () => {
    for (const value of ['acme', 'C:/x/y', '123', '__proto__', 'constructor', '', '😀']) {
      expect(intern(value)).toBe(value);
    }
  });

  it('returns an equal string for strings built by slicing and concatenation', () => {
    const built = 'program files/acme'.split('/')[0] + '';
    expect(intern(built)).toBe('program files');
  });
});
