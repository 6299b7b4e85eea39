/**
 * Writes src/metadata.ts: the OpenAPI schema of every DTO, produced by the @nestjs/swagger
 * plugin from the TypeScript types and class-validator decorators. Loaded at start-up, so the
 * same schema is served whether the code was compiled by `nest build` or transpiled by ts-jest.
 *
 * Beside the plugin's metadata it writes `typeSchemas`: for the DTO properties whose TypeScript
 * type the plugin can only call `Object` (a union of literals, a record, an interface, a mixed
 * union) or whose alias names a format (src/common/openapi/formats.ts), the schema that type
 * really has. src/common/openapi/document.ts merges it over the plugin's metadata.
 */
const { existsSync, writeFileSync } = require('node:fs');
const { relative, resolve } = require('node:path');
const ts = require('typescript');
const { PluginMetadataGenerator } = require('@nestjs/cli/lib/compiler/plugins/plugin-metadata-generator');
const { ReadonlyVisitor } = require('@nestjs/swagger/dist/plugin');

const root = resolve(__dirname, '..');
const sourceRoot = resolve(root, 'src');
const output = resolve(sourceRoot, 'metadata.ts');
const FORMATS_FILE = resolve(sourceRoot, 'common', 'openapi', 'formats.ts');
const DTO_SUFFIX = '.dto.ts';

/** What each alias of src/common/openapi/formats.ts writes into a schema. */
const FORMAT_ALIASES = {
  Uuid: { type: 'string', format: 'uuid' },
  DateTime: { type: 'string', format: 'date-time' },
  Email: { type: 'string', format: 'email' },
  Url: { type: 'string', format: 'uri' },
  Int: { type: 'integer' },
};

/** `unknown`: any JSON value except null (a DTO that accepts null says `| null`). */
const ANY_JSON = {
  oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'array', items: {} }, { type: 'object', additionalProperties: true }],
};

/** Nested interfaces deeper than this are left as plain objects (none is today). */
const MAX_DEPTH = 8;

const isNullish = (t) => (t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined | ts.TypeFlags.Void)) !== 0;
const isNullishNode = (n) =>
  n.kind === ts.SyntaxKind.UndefinedKeyword || (ts.isLiteralTypeNode(n) && n.literal.kind === ts.SyntaxKind.NullKeyword);

/** The type node without parentheses and without `| null` / `| undefined`, when one member is left. */
function coreNode(node) {
  while (node && ts.isParenthesizedTypeNode(node)) node = node.type;
  if (node && ts.isUnionTypeNode(node)) {
    const rest = node.types.filter((n) => !isNullishNode(n));
    return rest.length === 1 ? coreNode(rest[0]) : undefined;
  }
  return node;
}

function elementNode(node) {
  const core = coreNode(node);
  if (!core) return undefined;
  if (ts.isArrayTypeNode(core)) return core.elementType;
  if (ts.isTypeOperatorNode(core) && ts.isArrayTypeNode(core.type)) return core.type.elementType;
  if (ts.isTypeReferenceNode(core) && ['Array', 'ReadonlyArray'].includes(core.typeName.getText()) && core.typeArguments?.length === 1) {
    return core.typeArguments[0];
  }
  return undefined;
}

/** The formats.ts alias a type node names (through `| null`), if any. */
function formatAlias(node, checker) {
  const core = coreNode(node);
  if (!core || !ts.isTypeReferenceNode(core)) return undefined;
  let symbol = checker.getSymbolAtLocation(core.typeName);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const declaration = symbol?.declarations?.[0];
  if (!declaration || !ts.isTypeAliasDeclaration(declaration) || resolve(declaration.getSourceFile().fileName) !== FORMATS_FILE) return undefined;
  const schema = FORMAT_ALIASES[symbol.name];
  if (!schema) throw new Error(`scripts/generate-openapi-metadata.js does not know the format alias ${symbol.name} of ${FORMATS_FILE}`);
  return schema;
}

/**
 * The values of a union of literals in the order the source declares them (a union written out,
 * through type aliases, or `(typeof VALUES)[number]` of a constant array), so the document does not
 * depend on the compiler's internal order.
 */
function declaredOrder(node, checker, depth = 0) {
  if (!node || depth > 10) return [];
  if (ts.isParenthesizedTypeNode(node)) return declaredOrder(node.type, checker, depth + 1);
  if (ts.isUnionTypeNode(node)) return node.types.flatMap((n) => declaredOrder(n, checker, depth + 1));
  if (ts.isLiteralTypeNode(node)) {
    if (ts.isStringLiteral(node.literal)) return [node.literal.text];
    if (ts.isNumericLiteral(node.literal)) return [Number(node.literal.text)];
    return [];
  }
  if (ts.isTypeReferenceNode(node)) {
    let symbol = checker.getSymbolAtLocation(node.typeName);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    const declaration = symbol?.declarations?.[0];
    return declaration && ts.isTypeAliasDeclaration(declaration) ? declaredOrder(declaration.type, checker, depth + 1) : [];
  }
  if (ts.isIndexedAccessTypeNode(node)) {
    let query = node.objectType;
    while (ts.isParenthesizedTypeNode(query)) query = query.type;
    if (!ts.isTypeQueryNode(query)) return [];
    let symbol = checker.getSymbolAtLocation(query.exprName);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    let init = symbol?.valueDeclaration && ts.isVariableDeclaration(symbol.valueDeclaration) ? symbol.valueDeclaration.initializer : undefined;
    while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init))) init = init.expression;
    if (!init || !ts.isArrayLiteralExpression(init)) return [];
    return init.elements.flatMap((e) => (ts.isStringLiteral(e) ? [e.text] : ts.isNumericLiteral(e) ? [Number(e.text)] : []));
  }
  return [];
}

function inDeclaredOrder(values, node, type, checker) {
  const aliasNode = type.aliasSymbol?.declarations?.[0];
  const order = [...declaredOrder(node, checker), ...(aliasNode && ts.isTypeAliasDeclaration(aliasNode) ? declaredOrder(aliasNode.type, checker) : [])];
  const known = [...new Set(order)].filter((v) => values.includes(v));
  const rest = values.filter((v) => !known.includes(v)).sort();
  return [...known, ...rest];
}

function isClass(type) {
  const symbol = type.getSymbol();
  return !!symbol?.declarations?.some((d) => ts.isClassDeclaration(d));
}

/** The schema of the non-null members of a type. */
function membersSchema(members, node, checker, depth, whole = members[0]) {
  if (members.length === 0) return {};
  if (members.every((t) => t.isStringLiteral())) return { type: 'string', enum: inDeclaredOrder(members.map((t) => t.value), node, whole, checker) };
  if (members.every((t) => t.isNumberLiteral())) {
    const values = inDeclaredOrder(members.map((t) => t.value), node, whole, checker);
    return { type: values.every(Number.isInteger) ? 'integer' : 'number', enum: values };
  }
  if (members.every((t) => t.flags & ts.TypeFlags.BooleanLiteral)) {
    const values = [...new Set(members.map((t) => checker.typeToString(t) === 'true'))];
    return values.length === 2 ? { type: 'boolean' } : { type: 'boolean', enum: values };
  }
  if (members.length > 1) {
    // A mixed union: booleans and literals of one kind stay grouped.
    const groups = [];
    const strings = members.filter((t) => t.isStringLiteral());
    const booleans = members.filter((t) => t.flags & ts.TypeFlags.BooleanLiteral);
    if (strings.length) groups.push(membersSchema(strings, node, checker, depth, whole));
    if (booleans.length) groups.push(membersSchema(booleans, undefined, checker, depth));
    for (const t of members) if (!t.isStringLiteral() && !(t.flags & ts.TypeFlags.BooleanLiteral)) groups.push(typeSchema(t, undefined, checker, depth));
    return groups.length === 1 ? groups[0] : { oneOf: groups };
  }
  const [t] = members;
  const alias = formatAlias(node, checker);
  if (t.flags & ts.TypeFlags.StringLike) return { type: 'string', ...alias };
  if (t.flags & ts.TypeFlags.NumberLike) return { type: 'number', ...alias };
  if (t.flags & ts.TypeFlags.BooleanLike) return { type: 'boolean' };
  if (t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return ANY_JSON;
  if (checker.isArrayType(t) || checker.isTupleType(t)) {
    const [element] = checker.getTypeArguments(t);
    return { type: 'array', items: element ? typeSchema(element, elementNode(node), checker, depth + 1) : {} };
  }
  if (t.getSymbol()?.name === 'Date') return { type: 'string', format: 'date-time' };
  if (isClass(t)) return { $ref: `#/components/schemas/${t.getSymbol().name}` };
  if (t.flags & ts.TypeFlags.Object) {
    if (depth >= MAX_DEPTH) return { type: 'object' };
    const properties = checker.getPropertiesOfType(t);
    const index = checker.getIndexInfosOfType(t);
    const schema = { type: 'object' };
    if (properties.length) {
      schema.properties = {};
      const required = [];
      for (const p of properties) {
        const declaration = p.valueDeclaration;
        const propType = checker.getTypeOfSymbol(p);
        schema.properties[p.name] = typeSchema(propType, declaration && 'type' in declaration ? declaration.type : undefined, checker, depth + 1);
        if (!(p.flags & ts.SymbolFlags.Optional)) required.push(p.name);
      }
      if (required.length) schema.required = required;
    }
    if (index.length) {
      const value = index[0].type;
      schema.additionalProperties = value.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown) ? true : typeSchema(value, undefined, checker, depth + 1);
    } else if (!properties.length) {
      schema.additionalProperties = true;
    }
    return schema;
  }
  return {};
}

function typeSchema(type, node, checker, depth) {
  const all = type.isUnion() ? type.types : [type];
  const members = all.filter((t) => !isNullish(t));
  const nullable = all.some((t) => t.flags & ts.TypeFlags.Null);
  const schema = membersSchema(members, node, checker, depth, type);
  if (!nullable) return schema;
  if (schema.$ref) return { nullable: true, allOf: [{ $ref: schema.$ref }] };
  return { ...schema, nullable: true, ...(schema.enum ? { enum: [...schema.enum, null] } : {}) };
}

/** Whether the plugin already writes this schema: a primitive, a class, or an array of those. */
function pluginKnows(schema) {
  const plain = (s) => {
    const keys = Object.keys(s).filter((k) => k !== 'nullable');
    if (keys.length === 1 && (s.$ref || s.allOf)) return true;
    return keys.length === 1 && ['string', 'number', 'boolean'].includes(s.type);
  };
  const keys = Object.keys(schema).filter((k) => k !== 'nullable');
  if (schema.type === 'array') return keys.length === 2 && plain(schema.items);
  return plain(schema);
}

/** Collects `typeSchemas` for the printer: per DTO file, per class, per property. */
class TypeSchemaVisitor {
  constructor() {
    this.key = 'typeSchemas';
    this.typeImports = {};
    this.byFile = new Map();
  }

  visit(program, sourceFile) {
    if (!sourceFile.fileName.endsWith(DTO_SUFFIX)) return;
    const checker = program.getTypeChecker();
    for (const statement of sourceFile.statements) {
      if (!ts.isClassDeclaration(statement) || !statement.name) continue;
      const properties = {};
      for (const member of statement.members) {
        if (!ts.isPropertyDeclaration(member) || !member.type || !ts.isIdentifier(member.name)) continue;
        if (member.modifiers?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword)) continue;
        const schema = typeSchema(checker.getTypeFromTypeNode(member.type), member.type, checker, 0);
        if (!pluginKnows(schema)) properties[member.name.text] = schema;
      }
      if (Object.keys(properties).length === 0) continue;
      const path = `./${relative(sourceRoot, sourceFile.fileName).replace(/\\/g, '/').replace(/\.ts$/, '')}`;
      if (!this.byFile.has(path)) this.byFile.set(path, {});
      this.byFile.get(path)[statement.name.text] = literal(properties);
    }
  }

  collect() {
    const models = [...this.byFile.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([path, classes]) => [ts.factory.createCallExpression(ts.factory.createToken(ts.SyntaxKind.ImportKeyword), undefined, [ts.factory.createStringLiteral(path)]), classes]);
    return { models };
  }
}

/** A JSON value as a TypeScript literal expression. */
function literal(value) {
  const f = ts.factory;
  if (value === null) return f.createNull();
  if (Array.isArray(value)) return f.createArrayLiteralExpression(value.map(literal));
  if (typeof value === 'object') return f.createObjectLiteralExpression(Object.entries(value).map(([k, v]) => f.createPropertyAssignment(f.createStringLiteral(k), literal(v))));
  if (typeof value === 'string') return f.createStringLiteral(value);
  if (typeof value === 'number') return value < 0 ? f.createPrefixUnaryExpression(ts.SyntaxKind.MinusToken, f.createNumericLiteral(-value)) : f.createNumericLiteral(value);
  return value ? f.createTrue() : f.createFalse();
}

// The generator type-checks the program, which imports this file: give a fresh clone a stub first.
if (!existsSync(output)) writeFileSync(output, 'export default async () => ({});\n');
new PluginMetadataGenerator().generate({
  visitors: [
    new ReadonlyVisitor({ introspectComments: true, pathToSource: sourceRoot, classValidatorShim: true, dtoFileNameSuffix: [DTO_SUFFIX] }),
    new TypeSchemaVisitor(),
  ],
  outputDir: sourceRoot,
  watch: false,
  tsconfigPath: 'tsconfig.build.json',
});
