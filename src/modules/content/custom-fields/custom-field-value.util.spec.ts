import { checkValue, CustomFieldShape, definitionProblems, parseTextValue } from './custom-field-value.util';

const def = (type: CustomFieldShape['type'], extra: Partial<CustomFieldShape> = {}): CustomFieldShape => ({ type, options: [], validation: {}, ...extra });

describe('custom field definitions', () => {
  it('requires options for select fields and refuses them elsewhere', () => {
    expect(definitionProblems({ type: 'single_select', options: [] })).toEqual([['options', expect.any(String)]]);
    expect(definitionProblems({ type: 'text', options: ['a'] })).toEqual([['options', expect.any(String)]]);
    expect(definitionProblems({ type: 'multi_select', options: ['A', 'b'] })).toEqual([]);
  });

  it('refuses duplicate options regardless of case and names the offending index', () => {
    expect(definitionProblems({ type: 'single_select', options: ['Gold', 'gold '] })).toEqual([['options[1]', expect.any(String)]]);
  });

  it('accepts 200 options and refuses 201', () => {
    const opts = (n: number) => Array.from({ length: n }, (_, i) => `o${i}`);
    expect(definitionProblems({ type: 'single_select', options: opts(200) })).toEqual([]);
    expect(definitionProblems({ type: 'single_select', options: opts(201) }).map((p) => p[0])).toEqual(['options']);
  });

  it('accepts only the validation rules of the type, with sane bounds', () => {
    expect(definitionProblems({ type: 'text', validation: { maxLength: 10_000 } })).toEqual([]);
    expect(definitionProblems({ type: 'text', validation: { maxLength: 10_001 } })).toEqual([['validation.maxLength', expect.any(String)]]);
    expect(definitionProblems({ type: 'text', validation: { min: 1 } })).toEqual([['validation.min', expect.any(String)]]);
    expect(definitionProblems({ type: 'number', validation: { min: 5, max: 1 } })).toEqual([['validation.min', expect.any(String)]]);
    expect(definitionProblems({ type: 'number', validation: { min: 0, max: 10, integer: true } })).toEqual([]);
  });
});

describe('custom field values', () => {
  it('checks text length against the definition', () => {
    const d = def('text', { validation: { maxLength: 3 } });
    expect(checkValue(d, 'abc')).toEqual({ ok: true, value: 'abc' });
    expect(checkValue(d, 'abcd').ok).toBe(false);
    expect(checkValue(d, '').ok).toBe(false);
    expect(checkValue(d, 12).ok).toBe(false);
  });

  it('checks numbers for finiteness, integrality and bounds', () => {
    const d = def('number', { validation: { min: 0, max: 10, integer: true } });
    expect(checkValue(d, 10)).toEqual({ ok: true, value: 10 });
    expect(checkValue(d, 11).ok).toBe(false);
    expect(checkValue(d, -1).ok).toBe(false);
    expect(checkValue(d, 1.5).ok).toBe(false);
    expect(checkValue(def('number'), Number.NaN).ok).toBe(false);
    expect(checkValue(def('number'), '3').ok).toBe(false);
  });

  it('accepts real calendar dates only', () => {
    expect(checkValue(def('date'), '2024-02-29').ok).toBe(true);
    expect(checkValue(def('date'), '2023-02-29').ok).toBe(false);
    expect(checkValue(def('date'), '2024-2-1').ok).toBe(false);
  });

  it('maps select values to the defined option whatever their case, multi-select in definition order', () => {
    const single = def('single_select', { options: ['Gold', 'Silver'] });
    expect(checkValue(single, 'gold')).toEqual({ ok: true, value: 'Gold' });
    expect(checkValue(single, 'bronze').ok).toBe(false);
    const multi = def('multi_select', { options: ['A', 'B', 'C'] });
    expect(checkValue(multi, ['c', 'A', 'c'])).toEqual({ ok: true, value: ['A', 'C'] });
    expect(checkValue(multi, ['A', 'Z'])).toEqual({ ok: false, message: expect.stringContaining('"Z"') });
    expect(checkValue(multi, []).ok).toBe(false);
  });

  it('parses CSV text for each type', () => {
    expect(parseTextValue(def('number'), ' 4.5 ')).toEqual({ ok: true, value: 4.5 });
    expect(parseTextValue(def('number'), '4,5').ok).toBe(false);
    expect(parseTextValue(def('boolean'), 'Yes')).toEqual({ ok: true, value: true });
    expect(parseTextValue(def('boolean'), '0')).toEqual({ ok: true, value: false });
    expect(parseTextValue(def('boolean'), 'maybe').ok).toBe(false);
    expect(parseTextValue(def('multi_select', { options: ['A', 'B'] }), 'b; a')).toEqual({ ok: true, value: ['A', 'B'] });
    expect(parseTextValue(def('date'), '2024-01-31 ')).toEqual({ ok: true, value: '2024-01-31' });
  });
});
