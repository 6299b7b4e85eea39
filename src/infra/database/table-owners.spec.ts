import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TABLE_OWNERS } from './table-owners';

/**
 * One owner per table (docs/data-ownership.md): every table of the migrations has one owning
 * module folder, and only files under it write the table, by SQL (as the snapshot of
 * src/queries/ records it) or through a TypeORM entity declared there.
 */

const ROOT = join(__dirname, '../../..');

/**
 * Writers outside the owner that stay, each with its reason. Not a place for a module that
 * could call the owner's service: only code that runs before or beside the application.
 */
const DOCUMENTED_EXCEPTIONS: Record<string, string> = {
  // Fixtures with fixed ids for development and tests, written in one system transaction by the
  // seed command before any service has a caller to act for.
  'src/seed/seed.service.ts': 'development seed',
};

function files(dir: string, test: (rel: string) => boolean): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...files(rel, test));
    else if (test(rel)) out.push(rel);
  }
  return out.sort();
}

const read = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');

function migratedTables(): Set<string> {
  const tables = new Set<string>();
  // Tables created by up(); down() drops them again and is not read.
  for (const rel of files('src/infra/database/migrations', (f) => /\d+-.*\.ts$/.test(f))) {
    for (const m of read(rel).matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(?:public\.)?"?([a-z_][a-z0-9_]*)"?/gi)) tables.add(m[1].toLowerCase());
  }
  return tables;
}

/** SQL without comments and string literals, so that neither is taken for a statement. */
const code = (sql: string) => sql.replace(/--[^\n]*/g, '').replace(/'(?:[^']|'')*'/g, "''");

const WRITE = /\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM|MERGE\s+INTO|COPY|TRUNCATE(?:\s+TABLE)?)\s+(?:ONLY\s+)?("?[A-Za-z_][A-Za-z0-9_.]*"?|\$\{…\})/g;

/** 'table <- source file' for every write recorded in the SQL snapshot. */
function snapshotWrites(tables: Set<string>): { writes: Set<string>; dynamic: string[] } {
  const writes = new Set<string>();
  const dynamic: string[] = [];
  for (const rel of files('src/queries', (f) => f.endsWith('.sql'))) {
    const text = read(rel);
    const source = /from (src\/\S+\.ts)\./.exec(text)?.[1];
    if (!source) throw new Error(`${rel} does not name its source file; run npm run sql:snapshot`);
    for (const m of code(text).matchAll(WRITE)) {
      if (m[1] === '${…}') dynamic.push(`${source}: ${m[0]}`);
      const table = m[1].replace(/"/g, '').replace(/^public\./, '').toLowerCase();
      if (tables.has(table)) writes.add(`${table} <- ${source}`);
    }
  }
  return { writes, dynamic };
}

/** The tables of the TypeORM entities, by class, and the file declaring each. */
function entities(): Map<string, { table: string; file: string }> {
  const out = new Map<string, { table: string; file: string }>();
  for (const rel of files('src', (f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))) {
    const text = read(rel);
    const found = [...text.matchAll(/@Entity\(\s*(?:'([a-z_0-9]+)'|\{[^}]*name:\s*'([a-z_0-9]+)'[^}]*\})[^)]*\)\s*(?:@\w+\([^)]*\)\s*)*(?:export\s+)?class\s+(\w+)/g)];
    // An entity whose table this cannot read would escape the check: fail instead.
    if (found.length !== (text.match(/@Entity\(/g) ?? []).length) throw new Error(`${rel}: an @Entity whose table name is not a literal ('table' or { name: 'table' })`);
    for (const m of found) out.set(m[3], { table: m[1] ?? m[2], file: rel });
  }
  return out;
}

const WRITE_METHOD = String.raw`\.(?:save|insert|update|upsert|delete|remove|softDelete|softRemove|restore|increment|decrement|clear)\s*\(`;

/**
 * 'table <- file' for each entity declaration and each write through an entity: a write method
 * called on the entity's repository (directly, through a variable or a method returning it), or
 * an entity manager's write naming the entity. Reading another module's table is allowed.
 */
function entityWrites(): Set<string> {
  const byClass = entities();
  const writes = new Set<string>();
  for (const { table, file } of byClass.values()) writes.add(`${table} <- ${file}`);
  for (const rel of files('src', (f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))) {
    const text = read(rel);
    for (const m of text.matchAll(/\b(?:repo|getRepository|InjectRepository)\s*(?:<[^>]*>)?\(\s*(\w+)\s*\)/g)) {
      const entity = byClass.get(m[1]);
      if (!entity) continue;
      const start = text.lastIndexOf('\n', m.index) + 1;
      const statement = text.slice(start, text.indexOf(';', m.index) + 1);
      const holder = /(?:const|let)\s+(\w+)\s*=|(?:private|public|protected)?\s*(?:async\s+)?(\w+)\s*\([^)]*\)\s*(?::[^{=]*)?\{?\s*return\b|(?:private|readonly)\s+(?:readonly\s+)?(\w+)\s*:/.exec(statement);
      const name = holder?.[1] ?? holder?.[2] ?? holder?.[3];
      const direct = new RegExp(WRITE_METHOD).test(statement.slice(m.index - start));
      const viaName = name !== undefined && new RegExp(String.raw`\b${name}(?:\(\))?\)?${WRITE_METHOD}`).test(text);
      if (direct || viaName) writes.add(`${entity.table} <- ${rel}`);
    }
    // Entity-manager writes naming the entity, and query-builder writes (insert().into(E), update(E), delete().from(E)).
    const named = new RegExp(String.raw`${WRITE_METHOD}\s*(\w+)\s*[,)]|\.insert\(\)\s*\.into\(\s*(\w+)|\.delete\(\)\s*\.from\(\s*(\w+)`, 'g');
    for (const m of text.matchAll(named)) {
      const entity = byClass.get(m[1] ?? m[2] ?? m[3]);
      if (entity) writes.add(`${entity.table} <- ${rel}`);
    }
  }
  return writes;
}

const owns = (owner: string, file: string) => file.startsWith(`${owner}/`);

describe('table ownership', () => {
  const tables = migratedTables();

  it('gives every table of the migrations exactly one owning module folder, and names no other table', () => {
    expect(Object.keys(TABLE_OWNERS).sort()).toEqual([...tables].sort());
  });

  it('names owners that are folders of the code', () => {
    const folders = new Set(files('src', (f) => f.endsWith('.ts')).flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    expect(Object.values(TABLE_OWNERS).filter((o) => !folders.has(o))).toEqual([]);
  });

  it('finds writes in the SQL snapshot and the entities (the check reads something)', () => {
    const writes = [...snapshotWrites(tables).writes, ...entityWrites()];
    expect(writes).toContain('contacts <- src/modules/content/contacts/contact-batch.repository.ts');
    expect(writes).toContain('partner_login_branding <- src/modules/branding/branding.repository.ts');
    expect(writes.length).toBeGreaterThan(50);
  });

  it('writes no table whose name the code computes (the check could not see its owner)', () => {
    expect(snapshotWrites(tables).dynamic.filter((w) => !(w.split(': ')[0] in DOCUMENTED_EXCEPTIONS))).toEqual([]);
  });

  it('writes each table only from files under its owner', () => {
    const writes = [...snapshotWrites(tables).writes, ...entityWrites()];
    const violations = [
      ...new Set(
        writes.filter((w) => {
          const [table, file] = w.split(' <- ');
          return !owns(TABLE_OWNERS[table], file) && !(file in DOCUMENTED_EXCEPTIONS);
        }),
      ),
    ].sort();
    expect(violations).toEqual([]);
  });
});
