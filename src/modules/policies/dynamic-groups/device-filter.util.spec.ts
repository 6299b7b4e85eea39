import { filterCustomFields, FilterDefinition, filterProblems, mapFilterCustomFields } from './device-filter.util';

const ROLE = '11111111-1111-4111-8111-111111111111';
const CORES = '22222222-2222-4222-8222-222222222222';
const defs: Record<string, FilterDefinition> = {
  [ROLE]: { type: 'single_select', options: ['Web', 'DB'] },
  [CORES]: { type: 'number', options: [] },
};
const lookup = (id: string) => defs[id];

describe('dynamic group filters', () => {
  it('accepts device-attribute and custom-field conditions combined with all, any and not', () => {
    const f = {
      all: [
        { field: 'hostname', op: 'startsWith', value: 'SRV-' },
        { any: [{ customField: ROLE, op: 'eq', value: 'web' }, { not: { customField: CORES, op: 'lt', value: 4 } }] },
        { field: 'status', op: 'in', value: ['active'] },
        { customField: CORES, op: 'exists' },
      ],
    };
    expect(filterProblems(f, lookup)).toEqual([]);
  });

  it('checks operators and values against the custom field type', () => {
    expect(filterProblems({ customField: CORES, op: 'startsWith', value: '4' }, lookup)).toEqual([[['op'], expect.stringContaining('gt')]]);
    expect(filterProblems({ customField: CORES, op: 'gt', value: '4' }, lookup)).toEqual([[['value'], 'must be a number']]);
    expect(filterProblems({ customField: ROLE, op: 'eq', value: 'Mail' }, lookup)).toEqual([[['value'], 'must be one of: Web, DB']]);
    expect(filterProblems({ customField: ROLE, op: 'in', value: ['Web', 'x'] }, lookup)).toEqual([[['value', 1], expect.any(String)]]);
    expect(filterProblems({ customField: ROLE, op: 'exists', value: 'Web' }, lookup)).toEqual([[['value'], expect.any(String)]]);
  });

  it('refuses unknown custom fields, fields and malformed groups, with their path', () => {
    expect(filterProblems({ all: [{ customField: '33333333-3333-4333-8333-333333333333', op: 'exists' }] }, lookup)).toEqual([[['all', 0, 'customField'], expect.any(String)]]);
    expect(filterProblems({ any: [{ field: 'ram', op: 'eq', value: 'x' }] }, lookup)).toEqual([[['any', 0, 'field'], expect.any(String)]]);
    expect(filterProblems({ all: [], any: [] }, lookup)).toEqual([[[], expect.any(String)]]);
    expect(filterProblems({ field: 'hostname', customField: ROLE, op: 'exists' }, lookup)).toEqual([[[], expect.any(String)]]);
    expect(filterProblems({ field: 'siteId', op: 'eq', value: 'HQ' }, lookup)).toEqual([[['value'], 'must be a site id']]);
    expect(filterProblems({ field: 'hostname', op: 'eq', value: 'x', extra: 1 }, lookup)).toEqual([[['extra'], expect.any(String)]]);
  });

  it('limits nesting depth and the number of conditions', () => {
    let deep: object = { field: 'hostname', op: 'eq', value: 'x' };
    for (let i = 0; i < 4; i++) deep = { not: deep };
    expect(filterProblems(deep, lookup)).toEqual([]);
    expect(filterProblems({ not: deep }, lookup)).toEqual([[['not', 'not', 'not', 'not', 'not'], expect.stringContaining('nest')]]);
    const cond = { field: 'hostname', op: 'eq', value: 'x' };
    expect(filterProblems({ any: Array(50).fill(cond) }, lookup)).toEqual([]);
    expect(filterProblems({ any: Array(51).fill(cond) }, lookup)).toEqual([[['any', 50], expect.stringContaining('at most 50')]]);
  });

  it('lists and maps custom-field references', () => {
    const f = { all: [{ customField: 'role', op: 'eq', value: 'Web' }, { not: { customField: 'cores', op: 'exists' } }] };
    expect(filterCustomFields(f)).toEqual(['role', 'cores']);
    expect(mapFilterCustomFields(f as never, (k) => `id-${k}`)).toEqual({ all: [{ customField: 'id-role', op: 'eq', value: 'Web' }, { not: { customField: 'id-cores', op: 'exists' } }] });
  });
});
