#!/usr/bin/env node
/**
 * Writes every SQL statement the service's code issues to a checked-in snapshot under
 * src/queries/: one .sql file per source file, statements in source order, each headed by the
 * method (or constant) that holds it, interpolations shown as ${…}. A reviewer reads the SQL of
 * a change in one place; src/infra/database/sql-snapshot.spec.ts fails when a snapshot is stale.
 *
 *   node scripts/sql-snapshot.js          rewrite src/queries/ (npm run sql:snapshot)
 *   node scripts/sql-snapshot.js --check  exit 1 and name the stale files
 *
 * A statement is found by the TypeScript compiler API: the text given to a DbService call
 * (rows, one, exec, query) or to prepared(name, text), whatever literal it is built from, and
 * any string or template literal whose text starts with a statement keyword (texts kept in
 * constants and variables). Migrations are the schema's reviewed source and are left out.
 */
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const ROOT = path.resolve(__dirname, '..');
const SRC = 'src';
const OUT = 'src/queries';
const DB_CALLS = new Set(['rows', 'one', 'exec', 'query']);
const STATEMENT = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|MERGE|COPY|LOCK|CALL|TRUNCATE|SET|SHOW|VALUES|DO)\b/;
const SKIPPED = [/\.spec\.ts$/, /\.d\.ts$/, /^src\/metadata\.ts$/, /^src\/infra\/database\/migrations\//, /^src\/queries\//];

function sourceFiles(dir = SRC) {
  const out = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (entry.name.endsWith('.ts') && !SKIPPED.some((re) => re.test(rel))) out.push(rel);
  }
  return out.sort();
}

/** The literal's text with each interpolation as ${…}; null when the node is not a literal. */
function literalText(node) {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((s) => '${…}' + s.literal.text).join('');
  return null;
}

/** The literals a SQL argument is built from: a literal, a conditional of literals, a concatenation. */
function sqlLiterals(node) {
  if (literalText(node) !== null) return [node];
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node)) return sqlLiterals(node.expression);
  if (ts.isConditionalExpression(node)) return [...sqlLiterals(node.whenTrue), ...sqlLiterals(node.whenFalse)];
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) return [...sqlLiterals(node.left), ...sqlLiterals(node.right)];
  return [];
}

function nameOf(node) {
  const n = node.name;
  if (!n) return null;
  return ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n) ? n.text : n.getText();
}

/** Where the statement lives: Class.method, a function or a constant. */
function holder(node) {
  const parts = [];
  for (let n = node.parent; n; n = n.parent) {
    if (ts.isMethodDeclaration(n) || ts.isFunctionDeclaration(n) || ts.isPropertyDeclaration(n) || ts.isGetAccessor(n) || ts.isConstructorDeclaration(n)) {
      parts.unshift(ts.isConstructorDeclaration(n) ? 'constructor' : nameOf(n) ?? '(anonymous)');
    } else if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && parts.length === 0) {
      parts.unshift(n.name.text);
    } else if (ts.isClassDeclaration(n)) {
      parts.unshift(nameOf(n) ?? '(class)');
      break;
    }
  }
  return parts.length ? parts.join('.') : '(module)';
}

/** Removes the source's indentation so that the statement reads as SQL. */
function dedent(text) {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const rest = lines.slice(1).filter((l) => l.trim());
  const indent = rest.length ? Math.min(...rest.map((l) => l.match(/^ */)[0].length)) : 0;
  const body = [lines[0].trim(), ...lines.slice(1).map((l) => l.slice(indent).trimEnd())].join('\n').trim();
  return body.endsWith(';') ? body : `${body};`;
}

/** The statements of one source file, in source order. */
function statementsOf(rel, text) {
  const file = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found = new Map();
  const add = (lit, note) => {
    const sql = literalText(lit);
    if (sql === null || !sql.trim() || found.has(lit.pos)) return;
    found.set(lit.pos, { pos: lit.getStart(file), where: holder(lit) + (note ? ` (${note})` : ''), sql: dedent(sql) });
  };
  const visit = (node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const method = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : null;
      if (method === 'prepared' && node.arguments.length >= 2) {
        const name = literalText(node.arguments[0]);
        for (const lit of sqlLiterals(node.arguments[1])) add(lit, name ? `prepared ${name}` : 'prepared');
      } else if (method && DB_CALLS.has(method) && ts.isPropertyAccessExpression(callee) && node.arguments.length) {
        for (const lit of sqlLiterals(node.arguments[0])) add(lit);
      }
    }
    const sql = literalText(node);
    if (sql !== null && STATEMENT.test(sql)) add(node);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...found.values()].sort((a, b) => a.pos - b.pos).map(({ where, sql }) => ({ where, sql }));
}

/** The snapshot files as they should be: relative path → content. */
function render() {
  const out = new Map();
  for (const rel of sourceFiles()) {
    let text;
    try {
      text = fs.readFileSync(path.join(ROOT, rel), 'utf8');
    } catch (e) {
      if (e.code === 'ENOENT') continue; // removed while the tree was being read
      throw e;
    }
    const statements = statementsOf(rel, text);
    if (!statements.length) continue;
    const target = `${OUT}/${rel.slice(SRC.length + 1).replace(/\.ts$/, '.sql')}`;
    const body = statements.map((s) => `-- ${s.where}\n${s.sql}\n`).join('\n');
    out.set(target, `-- Generated by \`npm run sql:snapshot\` from ${rel}. Do not edit.\n\n${body}`);
  }
  return out;
}

function existing(dir = OUT) {
  const abs = path.join(ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? existing(`${dir}/${e.name}`) : e.name.endsWith('.sql') ? [`${dir}/${e.name}`] : []))
    .sort();
}

/** Snapshot files that differ from the code, are missing, or no longer have a source. */
function stale() {
  const want = render();
  const have = existing();
  const out = [];
  for (const [rel, content] of want) {
    const abs = path.join(ROOT, rel);
    if (!fs.existsSync(abs) || fs.readFileSync(abs, 'utf8') !== content) out.push(rel);
  }
  for (const rel of have) if (!want.has(rel)) out.push(rel);
  return out.sort();
}

function write() {
  const want = render();
  for (const rel of existing()) if (!want.has(rel)) fs.rmSync(path.join(ROOT, rel));
  for (const [rel, content] of want) {
    const abs = path.join(ROOT, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    if (!fs.existsSync(abs) || fs.readFileSync(abs, 'utf8') !== content) fs.writeFileSync(abs, content);
  }
  // Folders emptied by a removed source file.
  const prune = (dir) => {
    const abs = path.join(ROOT, dir);
    if (!fs.existsSync(abs)) return;
    for (const e of fs.readdirSync(abs, { withFileTypes: true })) if (e.isDirectory()) prune(`${dir}/${e.name}`);
    if (dir !== OUT && fs.readdirSync(abs).length === 0) fs.rmdirSync(abs);
  };
  prune(OUT);
  return want.size;
}

module.exports = { render, stale, statementsOf, OUT };

if (require.main === module) {
  if (process.argv.includes('--check')) {
    const files = stale();
    if (files.length) {
      console.error(`SQL snapshot is stale (run npm run sql:snapshot):\n${files.map((f) => `  ${f}`).join('\n')}`);
      process.exit(1);
    }
  } else {
    console.log(`sql-snapshot: ${write()} files in ${OUT}`);
  }
}
