/**
 * A JSON Schema (2020-12) of the subset the project publishes (docs/import-format.schema.json) as
 * an OpenAPI 3.0 schema object: `const` becomes a one-value `enum`, a `[type, "null"]` type becomes
 * `nullable`, `$schema` and `$id` go. Any other keyword it does not know stops the document build,
 * so a schema that grows a new keyword is translated on purpose rather than served wrong.
 */
const KEPT = new Set([
  'type',
  'title',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'uniqueItems',
  'default',
]);

export function toOpenApi30(schema: unknown): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('toOpenApi30: a schema must be an object');
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || key === '$id') continue;
    if (key === 'const') {
      out.enum = [value];
      continue;
    }
    if (!KEPT.has(key)) throw new Error(`toOpenApi30: the keyword ${key} has no OpenAPI 3.0 translation here`);
    if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null');
      if (types.length !== 1) throw new Error(`toOpenApi30: type ${JSON.stringify(value)} is not one type and null`);
      out.type = types[0];
      if (types.length !== value.length) out.nullable = true;
    } else if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, s]) => [name, toOpenApi30(s)]));
    } else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) {
      out[key] = toOpenApi30(value);
    } else {
      out[key] = value;
    }
  }
  // A const carries its type in JSON Schema; OpenAPI 3.0 wants it spelt out.
  if (Array.isArray(out.enum) && out.type === undefined && out.enum.length === 1) {
    const v = out.enum[0];
    out.type = typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
  }
  if (out.nullable && Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}
