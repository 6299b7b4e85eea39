import { Filter, parse } from 'scim2-parse-filter';
import { ScimError } from './scim-error';

/** A SQL boolean expression over the columns of the Users query, and its parameters. */
export interface SqlFilter {
  sql: string;
  params: unknown[];
}

/**
 * A filterable attribute: the SQL expression it reads (constant text, never from input), its kind,
 * and whether comparison ignores case (RFC 7643 `caseExact: false`).
 */
export interface FilterAttribute {
  sql: string;
  kind: 'string' | 'boolean' | 'datetime';
  caseExact: boolean;
}

export type AttributeTable = Readonly<Record<string, FilterAttribute>>;

/** Sub-attributes of a multi-valued attribute a value path may test (`emails[type eq "work"]`). */
export type ValuePathTable = Readonly<Record<string, AttributeTable>>;

export const MAX_FILTER_LENGTH = 1000;
const MAX_FILTER_NODES = 50;

const OPERATORS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'lt', 'ge', 'le']);

function likeEscape(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Attribute names compare case-insensitively (RFC 7644 §3.4.2.2); a schema URN prefix is allowed. */
function attributeKey(path: string): string {
  return path.replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, '').toLowerCase();
}

/**
 * Parses a SCIM filter (scim2-parse-filter) and maps it to a parameterised SQL expression over a
 * fixed table of attributes: input only ever becomes a parameter, never SQL text. Unknown
 * attributes, operators a type does not support and malformed filters are 400 `invalidFilter`.
 */
export function scimFilterToSql(text: string, attributes: AttributeTable, valuePaths: ValuePathTable = {}, firstParam = 1): SqlFilter {
  if (text.length > MAX_FILTER_LENGTH) throw ScimError.badRequest('invalidFilter', `A filter is at most ${MAX_FILTER_LENGTH} characters`);
  let ast: Filter;
  try {
    ast = parse(text);
  } catch {
    throw ScimError.badRequest('invalidFilter', 'The filter is not a valid SCIM filter expression');
  }
  const params: unknown[] = [];
  let nodes = 0;
  const param = (value: unknown): string => {
    params.push(value);
    return `$${firstParam + params.length - 1}`;
  };
  const lookup = (table: AttributeTable, path: string): FilterAttribute => {
    const attribute = table[attributeKey(path)];
    if (!attribute) throw ScimError.badRequest('invalidFilter', `Filtering on ${JSON.stringify(path.slice(0, 100))} is not supported`);
    return attribute;
  };
  const compare = (attribute: FilterAttribute, op: string, value: unknown): string => {
    if (op === 'pr') return `(${attribute.sql} IS NOT NULL)`;
    if (!OPERATORS.has(op)) throw ScimError.badRequest('invalidFilter', `Unknown operator ${op}`);
    if (value === null) {
      if (op === 'eq') return `(${attribute.sql} IS NULL)`;
      if (op === 'ne') return `(${attribute.sql} IS NOT NULL)`;
      throw ScimError.badRequest('invalidFilter', `null compares only with eq and ne`);
    }
    if (attribute.kind === 'boolean') {
      if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne')) throw ScimError.badRequest('invalidFilter', 'A boolean attribute compares with eq or ne and true or false');
      return `(${attribute.sql} ${op === 'eq' ? '=' : '<>'} ${param(value)}::boolean)`;
    }
    if (typeof value !== 'string') throw ScimError.badRequest('invalidFilter', 'This attribute compares with a string');
    if (attribute.kind === 'datetime') {
      if (Number.isNaN(Date.parse(value)) || !/^\d{4}-\d{2}-\d{2}/.test(value)) throw ScimError.badRequest('invalidFilter', 'A date-time value must be an RFC 3339 instant');
      const sqlOp = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' }[op as 'eq'];
      if (!sqlOp) throw ScimError.badRequest('invalidFilter', `A date-time compares with eq, ne, gt, ge, lt or le`);
      return `(${attribute.sql} ${sqlOp} ${param(new Date(value).toISOString())}::timestamptz)`;
    }
    const column = attribute.caseExact ? attribute.sql : `lower(${attribute.sql})`;
    const operand = attribute.caseExact ? value : value.toLowerCase();
    switch (op) {
      case 'eq':
        return `(${column} = ${param(operand)})`;
      case 'ne':
        return `(${column} IS DISTINCT FROM ${param(operand)})`;
      case 'co':
        return `(${column} LIKE ${param(`%${likeEscape(operand)}%`)})`;
      case 'sw':
        return `(${column} LIKE ${param(`${likeEscape(operand)}%`)})`;
      case 'ew':
        return `(${column} LIKE ${param(`%${likeEscape(operand)}`)})`;
      default:
        return `(${column} COLLATE "C" ${{ gt: '>', ge: '>=', lt: '<', le: '<=' }[op as 'gt']} ${param(operand)})`;
    }
  };
  const walk = (node: Filter, table: AttributeTable): string => {
    if (++nodes > MAX_FILTER_NODES) throw ScimError.badRequest('invalidFilter', `A filter has at most ${MAX_FILTER_NODES} terms`);
    switch (node.op) {
      case 'and':
      case 'or':
        return `(${node.filters.map((f) => walk(f, table)).join(node.op === 'and' ? ' AND ' : ' OR ')})`;
      case 'not':
        return `(NOT coalesce(${walk(node.filter, table)}, false))`;
      case '[]': {
        const sub = valuePaths[attributeKey(node.attrPath)];
        if (!sub) throw ScimError.badRequest('invalidFilter', `${JSON.stringify(node.attrPath.slice(0, 100))} has no sub-attributes to filter on`);
        return walk(node.valFilter, sub);
      }
      case 'pr':
        return compare(lookup(table, node.attrPath), 'pr', undefined);
      default:
        return compare(lookup(table, node.attrPath), node.op, node.compValue);
    }
  };
  return { sql: walk(ast, attributes), params };
}
