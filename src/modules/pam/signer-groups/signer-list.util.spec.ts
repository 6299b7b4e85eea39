import { normaliseSigners } from './signer-list.util';

describe('normaliseSigners', () => {
  it('trims entries and drops blank ones', () => {
    expect(normaliseSigners(['  Acme Corp ', '', '   ', 'Contoso'])).toEqual(['Acme Corp', 'Contoso']);
  });

  it('removes case-insensitive duplicates, keeping the first spelling and the order', () => {
    expect(normaliseSigners(['Microsoft Corporation', 'Adobe', 'MICROSOFT CORPORATION', ' microsoft corporation'])).toEqual([
      'Microsoft Corporation',
      'Adobe',
    ]);
  });

  it('keeps entries that differ only in letters outside ASCII, as the engine tells them apart', () => {
    expect(normaliseSigners(['Éditeur', 'éditeur'])).toEqual(['Éditeur', 'éditeur']);
  });

  it('returns an empty list for an empty input', () => expect(normaliseSigners([])).toEqual([]));
});
