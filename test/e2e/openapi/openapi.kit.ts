import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.0 document these tests read. */
export interface Doc {
  info: { description?: string };
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    responses?: Record<string, Response>;
  };
}

export interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, Response | { $ref: string }>;
}

export interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: Schema }>;
}

export type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  pattern?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
};

export const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** Every operation of the document, with its path and method. */
export function operations(doc: Doc): { path: string; method: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => ({ path, method: m, op: item[m] })));
}

export function response(doc: Doc, r: Response | { $ref: string } | undefined): Response | undefined {
  if (!r) return undefined;
  if ('$ref' in r) return doc.components.responses?.[r.$ref.replace('#/components/responses/', '')];
  return r;
}

/** The error codes an operation documents under a status (from its ErrorBody schema's `code` enum). */
export function documentedCodes(doc: Doc, op: Operation, status: number): string[] | undefined {
  const r = response(doc, op.responses[String(status)]);
  const schema = r?.content?.['application/json']?.schema;
  const refinement = schema?.allOf?.find((s) => s.properties?.code);
  return refinement?.properties?.code?.enum as string[] | undefined;
}

/** Every documented error code of an operation, whatever its status. */
export function allDocumentedCodes(doc: Doc, op: Operation): Set<string> {
  const out = new Set<string>();
  for (const status of Object.keys(op.responses)) if (Number(status) >= 400) for (const c of documentedCodes(doc, op, Number(status)) ?? []) out.add(c);
  return out;
}

/**
 * An OpenAPI 3.0 schema as the JSON Schema a validator reads: `nullable: true` becomes "null, or
 * the schema" (so a nullable reference or enumeration accepts null), and `#/components/…`
 * references point into the document registered as `openapi`.
 */
function jsonSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(jsonSchema);
  if (typeof s !== 'object' || s === null) return s;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(s)) {
    if (key === '$ref' && typeof value === 'string') out.$ref = value.replace(/^#\/components\//, 'openapi#/components/');
    else if (key !== 'nullable' || value !== true) out[key] = jsonSchema(value);
  }
  return (s as { nullable?: unknown }).nullable === true ? { anyOf: [{ type: 'null' }, out] } : out;
}

/** A validator of answers against the document's schemas; formats are checked (uuid, date-time, email, uri). */
export function answerValidator(doc: Doc): (schema: Schema) => ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: jsonSchema(doc.components) as object });
  const cache = new Map<string, ValidateFunction>();
  return (schema) => {
    const key = JSON.stringify(schema);
    let fn = cache.get(key);
    if (!fn) {
      fn = ajv.compile(jsonSchema(schema) as object);
      cache.set(key, fn);
    }
    return fn;
  };
}
