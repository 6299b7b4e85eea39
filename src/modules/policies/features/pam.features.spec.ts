import { featureProblems } from './policy-feature.registry';

const hash = 'a'.repeat(64);

describe('pam and software policy features', () => {
  it('accepts the elevation-prompt switch on a configuration policy only', () => {
    expect(featureProblems('configuration', { pam: { uacInterceptionEnabled: false } })).toEqual([]);
    expect(featureProblems('configuration', { pam: {} })).toEqual([]);
    expect(featureProblems('configuration', { pam: { uacInterceptionEnabled: 'no' } })).toEqual([[['pam', 'uacInterceptionEnabled'], 'must be true or false']]);
    expect(featureProblems('configuration', { pam: { approvals: true } })).toEqual([[['pam', 'approvals'], 'is not a known property']]);
    expect(featureProblems('patch', { pam: { uacInterceptionEnabled: true } })).toEqual([[['pam'], expect.stringContaining('does not apply')]]);
  });

  it('accepts software lists in each mode with any combination of entry criteria', () => {
    for (const mode of ['allowlist', 'blocklist', 'audit']) {
      expect(
        featureProblems('configuration', {
          software: { mode, entries: [{ name: 'setup.exe' }, { sha256: hash.toUpperCase() }, { signer: 'Contoso Ltd', pathGlob: 'C:\\Tools\\**\\*.exe' }] },
        }),
      ).toEqual([]);
    }
    expect(featureProblems('configuration', { software: { mode: 'blocklist', entries: [] } })).toEqual([]);
  });

  it('refuses an unknown mode, a missing mode or entry list, and an entry that would match every executable', () => {
    expect(featureProblems('configuration', { software: { mode: 'denylist', entries: [] } })).toEqual([[['software', 'mode'], expect.stringContaining('allowlist, blocklist, audit')]]);
    expect(featureProblems('configuration', { software: { entries: [] } })).toEqual([[['software', 'mode'], 'is required']]);
    expect(featureProblems('configuration', { software: { mode: 'audit' } })).toEqual([[['software', 'entries'], 'is required']]);
    expect(featureProblems('configuration', { software: { mode: 'audit', entries: [{ name: 'ok.exe' }, {}] } })).toEqual([
      [['software', 'entries', 1], expect.stringContaining('at least one of')],
    ]);
  });

  it('checks each criterion: a 64-hex hash, bounded names, signers and globs, no unknown fields', () => {
    const entry = (e: object) => featureProblems('configuration', { software: { mode: 'allowlist', entries: [e] } });
    expect(entry({ sha256: 'a'.repeat(63) })).toEqual([[['software', 'entries', 0, 'sha256'], expect.stringContaining('must match')]]);
    expect(entry({ sha256: 'g'.repeat(64) })).toHaveLength(1);
    expect(entry({ name: 'n'.repeat(255) })).toEqual([]);
    expect(entry({ name: 'n'.repeat(256) })).toEqual([[['software', 'entries', 0, 'name'], 'must be at most 255 characters']]);
    expect(entry({ signer: '' })).toEqual([[['software', 'entries', 0, 'signer'], 'must be at least 1 characters']]);
    expect(entry({ pathGlob: 'p'.repeat(1024) })).toEqual([]);
    expect(entry({ pathGlob: 'p'.repeat(1025) })).toHaveLength(1);
    expect(entry({ publisher: 'x' })).toEqual([[['software', 'entries', 0, 'publisher'], 'is not a known property']]);
  });

  it('caps a software list at 1,000 entries', () => {
    const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `tool-${i}.exe` }));
    expect(featureProblems('configuration', { software: { mode: 'allowlist', entries: entries(1000) } })).toEqual([]);
    expect(featureProblems('configuration', { software: { mode: 'allowlist', entries: entries(1001) } })).toEqual([[['software', 'entries'], 'must have at most 1000 items']]);
  });
});
