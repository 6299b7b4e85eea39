import type { Problem } from './path.util';
import { checkShape, Shape, toJsonSchema } from './shape.util';

const doc: Shape = {
  type: 'object',
  required: ['customers'],
  properties: {
    version: { type: 'const', value: 1 },
    customers: {
      type: 'array',
      uniqueBy: 'externalId',
      items: {
        type: 'object',
        required: ['externalId', 'name'],
        properties: {
          externalId: { type: 'string', minLength: 1, maxLength: 10 },
          name: { type: 'string', minLength: 1 },
          email: { type: 'string', format: 'email', nullable: true },
          seats: { type: 'integer', minimum: 0, maximum: 5 },
          tags: { type: 'object', properties: {}, additionalProperties: { type: 'boolean' } },
        },
        check: (c: { name: string }): Problem[] => (c.name === 'forbidden' ? [[['name'], 'this name is reserved']] : []),
      },
    },
  },
};

describe('checking JSON values against a shape', () => {
  it('accepts a valid value', () => {
    expect(checkShape(doc, { version: 1, customers: [{ externalId: 'a', name: 'A', email: null, seats: 5, tags: { x: true } }] })).toEqual([]);
  });

  it('reports the path of each problem in document order', () => {
    const problems = checkShape(doc, { version: 2, customers: [{ externalId: 'a', name: 'A' }, { externalId: 'b' }, { externalId: 'c', name: 'C', seats: 6, extra: 1 }] });
    expect(problems.map(([p]) => p)).toEqual([['version'], ['customers', 1, 'name'], ['customers', 2, 'seats'], ['customers', 2, 'extra']]);
  });

  it('finds duplicate ids, bad formats, wrong types and map values', () => {
    const problems = checkShape(doc, { customers: [{ externalId: 'a', name: 'A' }, { externalId: 'a', name: 'B', email: 'nope', tags: { x: 'yes' } }] });
    expect(problems).toEqual([
      [['customers', 1, 'email'], 'must be an email address'],
      [['customers', 1, 'tags', 'x'], 'must be true or false'],
    ]);
    expect(checkShape(doc, { customers: [{ externalId: 'a', name: 'A' }, { externalId: 'a', name: 'B' }] })).toEqual([[['customers', 1, 'externalId'], 'duplicates item 0']]);
    expect(checkShape(doc, { customers: {} })).toEqual([[['customers'], 'must be an array, not object']]);
    expect(checkShape(doc, [])).toEqual([[[], 'must be an object, not array']]);
  });

  it('runs cross-field checks only on values of the right shape', () => {
    expect(checkShape(doc, { customers: [{ externalId: 'a', name: 'forbidden' }] })).toEqual([[['name'], 'this name is reserved']]);
    expect(checkShape(doc, { customers: [{ externalId: 'a', name: 'forbidden', seats: -1 }] })).toEqual([[['customers', 0, 'seats'], 'must be at least 0']]);
  });

  it('reports one problem per value, the constraint named first, and an array of the wrong length as a whole', () => {
    const shape: Shape = {
      type: 'object',
      properties: {
        kind: { type: 'string', enum: ['a', 'b'], maxLength: 1, nullable: true },
        list: { type: 'array', maxItems: 1, items: { type: 'integer' } },
        version: { type: 'const', value: 1 },
      },
    };
    expect(checkShape(shape, { kind: 'long', list: ['x', 'y'], version: '1' })).toEqual([
      [['kind'], 'must be one of: a, b'],
      [['list'], 'must have at most 1 items'],
      [['version'], 'must be 1'],
    ]);
    expect(checkShape(shape, { kind: null, list: [1.5] })).toEqual([[['list', 0], 'must be a whole number']]);
  });

  it('says a missing value is required, with the path it was given', () => {
    expect(checkShape({ type: 'any' }, undefined, ['settings'])).toEqual([[['settings'], 'a value is required']]);
    expect(checkShape(doc, { customers: [{}] }, ['line 3'])).toEqual([
      [['line 3', 'customers', 0, 'externalId'], 'is required'],
      [['line 3', 'customers', 0, 'name'], 'is required'],
    ]);
  });

  it('reports a cross-field check among the structural problems of other values, in document order', () => {
    expect(checkShape(doc, { customers: [{ externalId: 'a', name: 'forbidden' }, { externalId: 5, name: 'B' }] })).toEqual([
      [['name'], 'this name is reserved'],
      [['customers', 1, 'externalId'], 'must be a string, not number'],
    ]);
  });

  it('stops after the limit', () => {
    const many = { customers: Array.from({ length: 50 }, () => ({})) };
    expect(checkShape(doc, many, [], 3)).toHaveLength(3);
  });

  it('produces a JSON Schema with the same constraints', () => {
    const schema = toJsonSchema(doc) as { properties: { customers: { items: { properties: Record<string, unknown>; required: string[] }; description: string } } };
    expect(schema.properties.customers.items.required).toEqual(['externalId', 'name']);
    expect(schema.properties.customers.items.properties.email).toEqual({ type: ['string', 'null'], format: 'email' });
    expect(schema.properties.customers.items.properties.seats).toEqual({ type: 'integer', minimum: 0, maximum: 5 });
    expect(schema.properties.customers.description).toBe('Items are unique by externalId.');
  });
});
