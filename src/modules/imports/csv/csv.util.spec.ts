import { CsvError, csvRecords, parseCsv } from './csv.util';

describe('CSV parsing', () => {
  it('splits fields and rows, with CRLF or LF and an optional byte-order mark', () => {
    expect(parseCsv('\ufeffa,b\r\n1,2\n3,')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['1', '2'] },
      { line: 3, fields: ['3', ''] },
    ]);
  });

  it('keeps commas, doubled quotes and line breaks inside quoted fields', () => {
    expect(parseCsv('name,notes\n"Lee, Ann","said ""hi""\nthen left"\nnext,x\n')).toEqual([
      { line: 1, fields: ['name', 'notes'] },
      { line: 2, fields: ['Lee, Ann', 'said "hi"\nthen left'] },
      { line: 4, fields: ['next', 'x'] },
    ]);
  });

  it('skips blank lines', () => {
    expect(parseCsv('a\n\n\nb\n').map((r) => r.fields)).toEqual([['a'], ['b']]);
  });

  it('refuses an unclosed quote and stray quotes, naming the line', () => {
    expect(() => parseCsv('a\n"open,b\n')).toThrow(expect.objectContaining({ line: 2 }));
    expect(() => parseCsv('a"b,c')).toThrow(CsvError);
    expect(() => parseCsv('"a"b,c')).toThrow(CsvError);
  });

  it('maps records by header and names every ragged row, keeping the others', () => {
    expect(csvRecords('x,y\n1,2\n').records).toEqual([{ line: 2, values: { x: '1', y: '2' } }]);
    const ragged = csvRecords('x,y\n1\n1,2\n1,2,3\n');
    expect(ragged.records).toEqual([{ line: 3, values: { x: '1', y: '2' } }]);
    expect(ragged.problems.map((p) => [p.line, p.message])).toEqual([
      [2, 'expected 2 fields, found 1'],
      [4, 'expected 2 fields, found 3'],
    ]);
  });
});
