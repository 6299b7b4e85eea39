import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUNCTION_OWNERS, type FunctionOwner, TABLE_OWNERS } from './table-owners';

/**
 * One owner per table (docs/data-ownership.md): every table of the migrations has one owning
 * module folder, and only files under it write the table, by SQL (as the snapshot of
 * src/queries/ records it) or through a TypeORM entity declared there. Likewise one owner per
 * database function: the owner of the tables it writes, and the only folder whose code calls it
 * when it changes anything.
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

/**
 * Callers of a changing function outside its owner that stay for now, each with its reason and
 * the service that will take the call. Not a place for new code: call the owner's service.
 */
const PENDING_CALLERS: Record<string, Record<string, string>> = {};

/**
 * Migrations that create functions under computed names, with the names they create. Each may only
 * re-create functions an earlier migration defined (the check fails otherwise): their bodies and
 * what they write are read from that earlier definition.
 */
const COMPUTED_DEFINITIONS: Record<string, string[]> = {
  // The rule of acting on a person in PL/pgSQL instead of SQL: same names, bodies and settings.
  'src/infra/database/migrations/1763702100000-person-rule-plans.ts': [
    'app_person_reach',
    'app_may_act_on',
    'app_may_grant',
    'app_may_act_on_identity',
    'app_account_owner',
    'app_may_change_email',
  ],
};

interface MigrationSource {
  file: string;
  text: string;
}

interface DefinedFunction {
  /** The migration whose definition is live (the last that creates or replaces the function). */
  file: string;
  body: string;
}

/** up() of a migration, with every migration constant it names (`${NAME}` or NAME) replaced by its text. */
function upOf(source: string, constants: Map<string, string>): string {
  const start = source.indexOf('async up(');
  const end = source.indexOf('async down(', start);
  const up = source.slice(start < 0 ? 0 : start, end < 0 ? undefined : end);
  return up.replace(/\$\{([A-Z][A-Z0-9_]*)\}|\b([A-Z][A-Z0-9_]*)\b/g, (whole, a?: string, b?: string) => constants.get((a ?? b)!) ?? whole);
}

/** The top-level names of a DROP FUNCTION list (`f(uuid), g(text[], int)`). */
function droppedNames(list: string): string[] {
  const names: string[] = [];
  let depth = 0;
  let word = '';
  for (const ch of list) {
    if (ch === '(') {
      if (depth === 0 && word) names.push(word.trim().replace(/^public\./, '').replace(/"/g, ''));
      depth++;
    } else if (ch === ')') depth--;
    else if (depth === 0) word = ch === ',' ? '' : word + ch;
  }
  return names;
}

/**
 * The functions the migrations leave, in order: each CREATE [OR REPLACE] FUNCTION of an up()
 * defines (or replaces) one, each DROP FUNCTION there removes one; down() is not read. A definition
 * under a computed name fails the check unless COMPUTED_DEFINITIONS lists its migration.
 */
function liveFunctions(migrations: MigrationSource[], computed: Record<string, string[]> = COMPUTED_DEFINITIONS): Map<string, DefinedFunction> {
  const constants = new Map<string, string>();
  for (const { text } of migrations) for (const m of text.matchAll(/const\s+([A-Z][A-Z0-9_]*)\s*=\s*`([^`]*)`/g)) constants.set(m[1], m[2]);
  const live = new Map<string, DefinedFunction>();
  for (const { file, text } of migrations) {
    const up = upOf(text, constants);
    const steps = [
      ...[...up.matchAll(/\bCREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+/gi)].map((m) => ({ at: m.index + m[0].length, drop: false })),
      ...[...up.matchAll(/\bDROP\s+FUNCTION\s+(?:IF\s+EXISTS\s+)?/gi)].map((m) => ({ at: m.index + m[0].length, drop: true })),
    ].sort((a, b) => a.at - b.at);
    for (const { at, drop } of steps) {
      if (drop) {
        for (const name of droppedNames(up.slice(at, up.indexOf(';', at) < 0 ? undefined : up.indexOf(';', at)))) live.delete(name);
        continue;
      }
      const named = /^(?:public\.)?"?([a-z_][a-z0-9_]*)"?\s*\(/i.exec(up.slice(at));
      if (!named) {
        const names = computed[file];
        if (!names) throw new Error(`${file} creates a function whose name is computed ("${up.slice(at, at + 40).trim()}…"): name it literally, or list the migration in COMPUTED_DEFINITIONS`);
        const unknown = names.filter((n) => !live.has(n));
        if (unknown.length) throw new Error(`${file} re-creates ${unknown.join(', ')} under a computed name, but no earlier migration defines them`);
        continue;
      }
      const tag = /\bAS\s+(\$[A-Za-z_]*\$)/i.exec(up.slice(at));
      if (!tag) throw new Error(`${file}: the body of ${named[1]} is not dollar-quoted (AS $f$ … $f$), so what it writes cannot be read`);
      const bodyStart = at + tag.index + tag[0].length;
      const bodyEnd = up.indexOf(tag[1], bodyStart);
      live.set(named[1].toLowerCase(), { file, body: up.slice(bodyStart, bodyEnd < 0 ? undefined : bodyEnd) });
    }
  }
  return live;
}

/** The migrated tables a function body writes itself (not through the functions it calls). */
function bodyWrites(body: string, tables: Set<string>): string[] {
  const out = new Set<string>();
  for (const m of code(body).matchAll(WRITE)) {
    const table = m[1].replace(/"/g, '').replace(/^public\./, '').toLowerCase();
    if (tables.has(table)) out.add(table);
  }
  return [...out].sort();
}

/** Which of `names` a text calls (`name(`), strings and comments aside. */
const callsIn = (text: string, names: Iterable<string>) => [...names].filter((n) => new RegExp(String.raw`\b${n}\s*\(`).test(code(text)));

interface FunctionCheckInput {
  functions: Map<string, DefinedFunction>;
  owners: Readonly<Record<string, FunctionOwner>>;
  tableOwners: Readonly<Record<string, string>>;
  /** For each source file of the application, the statements it sends (the SQL snapshot). */
  statements: Map<string, string>;
  /** file -> function -> reason: callers outside the owner that stay for now. */
  pendingCallers?: Record<string, Record<string, string>>;
  /** Files that may call anything (the development seed). */
  exceptions?: Record<string, string>;
}

/**
 * Every way the functions break the rule, one sentence each naming the function and the file at
 * fault; empty when they keep it.
 */
function functionOwnershipViolations(input: FunctionCheckInput): string[] {
  const { functions, owners, tableOwners, statements, pendingCallers = {}, exceptions = {} } = input;
  const tables = new Set(Object.keys(tableOwners));
  const out: string[] = [];
  for (const [name, { file }] of functions) if (!owners[name]) out.push(`${name} (defined by ${file}) has no owner: add it to FUNCTION_OWNERS`);
  for (const name of Object.keys(owners)) if (!functions.has(name)) out.push(`${name} is in FUNCTION_OWNERS, but no migration leaves it`);

  const direct = new Map([...functions].map(([name, f]) => [name, bodyWrites(f.body, tables)]));
  const calls = new Map([...functions].map(([name, f]) => [name, callsIn(f.body, functions.keys()).filter((c) => c !== name)]));
  /** What a call changes: the function's own writes and those of every function it calls, transitively. */
  const changes = (name: string, seen = new Set<string>()): Set<string> => {
    seen.add(name);
    const all = new Set(direct.get(name));
    for (const c of calls.get(name) ?? []) if (!seen.has(c)) for (const t of changes(c, seen)) all.add(t);
    return all;
  };

  for (const [name, { file }] of functions) {
    const entry = owners[name];
    if (!entry) continue;
    const declared = [...(entry.writes ?? []), ...Object.keys(entry.onBehalfOf ?? {})];
    const written = direct.get(name)!;
    for (const t of written.filter((t) => !declared.includes(t))) out.push(`${name} (${file}) writes ${t}, which its FUNCTION_OWNERS entry does not list`);
    for (const t of declared.filter((t) => !written.includes(t))) out.push(`${name} (${file}) is listed as writing ${t}, which its body does not write`);
    for (const t of entry.writes ?? [])
      if (tableOwners[t] !== entry.owner) out.push(`${name} (${file}) is owned by ${entry.owner} but writes ${t}, owned by ${tableOwners[t]}: the owner of its main table owns it, other tables go in onBehalfOf`);
    for (const t of Object.keys(entry.onBehalfOf ?? {}))
      if (tableOwners[t] === entry.owner) out.push(`${name} (${file}) lists ${t} in onBehalfOf, but its own owner ${entry.owner} owns that table: list it in writes`);
    if (Object.keys(entry.onBehalfOf ?? {}).length && !(entry.writes ?? []).length)
      out.push(`${name} (${file}) writes only other modules’ tables: it belongs to the owner of its main table`);
  }

  for (const [source, text] of statements) {
    if (source in exceptions) continue;
    for (const name of callsIn(text, functions.keys())) {
      const entry = owners[name];
      if (!entry || owns(entry.owner, source) || pendingCallers[source]?.[name]) continue;
      const changed = [...changes(name)];
      // A function that changes nothing is read like a table: any module may call it.
      if (changed.length) out.push(`${name} (owned by ${entry.owner}, writes ${changed.sort().join(', ')}) is called from ${source}: call ${entry.owner}'s exported service instead`);
    }
  }
  return out.sort();
}

function migrations(): MigrationSource[] {
  return files('src/infra/database/migrations', (f) => /\d+-.*\.ts$/.test(f)).map((file) => ({ file, text: read(file) }));
}

/** The statements of each source file, as the SQL snapshot of src/queries/ records them. */
function snapshotStatements(): Map<string, string> {
  const out = new Map<string, string>();
  for (const rel of files('src/queries', (f) => f.endsWith('.sql'))) {
    const text = read(rel);
    const source = /from (src\/\S+\.ts)\./.exec(text)?.[1];
    if (!source) throw new Error(`${rel} does not name its source file; run npm run sql:snapshot`);
    out.set(source, text);
  }
  return out;
}

describe('table ownership', () => {
  const tables = migratedTables();

  it('gives every table of the migrations exactly one owning module folder, and names no other table', () => {
    expect(Object.keys(TABLE_OWNERS).sort()).toEqual([...tables].sort());
  });

  it('names owners, of tables and of functions, that are folders of the code', () => {
    const folders = new Set(files('src', (f) => f.endsWith('.ts')).flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    expect([...Object.values(TABLE_OWNERS), ...Object.values(FUNCTION_OWNERS).map((f) => f.owner)].filter((o) => !folders.has(o))).toEqual([]);
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


describe('function ownership', () => {
  const tables = migratedTables();
  const functions = liveFunctions(migrations());

  it('reads the functions the migrations leave, each from its last definition (the check reads something)', () => {
    expect(functions.size).toBeGreaterThan(50);
    expect(functions.get('app_agent_commands_take')?.file).toBe('src/infra/database/migrations/1763702200000-agent-command-channel.ts');
    expect(functions.get('scim_deprovision_user')?.file).toBe('src/infra/database/migrations/1763702000000-scim-conformance.ts');
    expect(bodyWrites(functions.get('app_ingest_insert')!.body, tables)).toEqual(['audit_logs', 'elevation_requests', 'pam_elevation_events']);
    expect(callsIn(snapshotStatements().get('src/modules/pam/requests/elevation-intake.repository.ts')!, functions.keys())).toEqual(['app_ingest_insert']);
  });

  it('gives every function exactly one owner, the owner of what it writes, and lets only that owner call a function that changes anything', () => {
    const violations = functionOwnershipViolations({
      functions,
      owners: FUNCTION_OWNERS,
      tableOwners: TABLE_OWNERS,
      statements: snapshotStatements(),
      pendingCallers: PENDING_CALLERS,
      exceptions: DOCUMENTED_EXCEPTIONS,
    });
    expect(violations).toEqual([]);
  });

  it('keeps each pending caller a real call of a function owned elsewhere (an entry that no longer applies is removed)', () => {
    const statements = snapshotStatements();
    const stale = Object.entries(PENDING_CALLERS).flatMap(([file, names]) =>
      Object.keys(names)
        .filter((name) => !callsIn(statements.get(file) ?? '', [name]).length || owns(FUNCTION_OWNERS[name]?.owner ?? '', file))
        .map((name) => `${file} ${name}`),
    );
    expect(stale).toEqual([]);
  });

  describe('the checker, on a made-up schema', () => {
    const migration = (file: string, up: string, extra = ''): MigrationSource => ({ file, text: `class M {\n  async up(q) {\n    await q.query(\`${up}\`);\n  }\n  async down(q) {\n    await q.query(\`DROP FUNCTION f_read();\`);\n  }\n}\n${extra}` });
    const schema = [
      migration(
        'm/1-first.ts',
        `CREATE FUNCTION f_insert(p uuid) RETURNS void LANGUAGE sql AS $f$ INSERT INTO requests (id) VALUES (p) $f$;
         CREATE FUNCTION f_read() RETURNS bigint LANGUAGE sql STABLE AS $f$ SELECT count(*) FROM requests $f$;
         CREATE FUNCTION f_gone() RETURNS void LANGUAGE sql AS $f$ SELECT 1 $f$;`,
      ),
      migration(
        'm/2-second.ts',
        `DROP FUNCTION f_gone();
         CREATE OR REPLACE FUNCTION \${F_INSERT_V2}
         CREATE FUNCTION f_batch(p uuid[]) RETURNS void LANGUAGE plpgsql AS $g$ BEGIN PERFORM f_insert(x) FROM unnest(p) x; END $g$;`,
        "const F_INSERT_V2 = `f_insert(p uuid) RETURNS void LANGUAGE sql AS $f$ WITH r AS (INSERT INTO requests (id) VALUES (p)) INSERT INTO audit (id) VALUES (p) $f$;`;",
      ),
    ];
    const tableOwners = { requests: 'src/modules/pam', audit: 'src/modules/audit' };
    const fns = liveFunctions(schema);
    const owners: Record<string, FunctionOwner> = {
      f_insert: { owner: 'src/modules/pam', writes: ['requests'], onBehalfOf: { audit: 'the request’s audit row' } },
      f_read: { owner: 'src/modules/pam' },
      f_batch: { owner: 'src/modules/pam' },
    };
    const check = (over: Partial<FunctionCheckInput> = {}) =>
      functionOwnershipViolations({ functions: fns, owners, tableOwners, statements: new Map([['src/modules/pam/intake.repository.ts', 'SELECT f_insert($1);']]), ...over });

    it('keeps the last definition of each function, forgets one that up() drops and reads nothing of down()', () => {
      expect([...fns.keys()].sort()).toEqual(['f_batch', 'f_insert', 'f_read']);
      expect(fns.get('f_insert')!.file).toBe('m/2-second.ts');
      expect(bodyWrites(fns.get('f_insert')!.body, new Set(Object.keys(tableOwners)))).toEqual(['audit', 'requests']);
    });

    it('passes a schema that keeps the rule', () => {
      expect(check()).toEqual([]);
    });

    it('names a function without an owner and the migration that defines it', () => {
      const { f_read: _read, ...rest } = owners;
      expect(check({ owners: rest })).toEqual(['f_read (defined by m/1-first.ts) has no owner: add it to FUNCTION_OWNERS']);
    });

    it('names a function that writes another module’s table without listing it, and one listed as writing what it does not', () => {
      expect(check({ owners: { ...owners, f_insert: { owner: 'src/modules/pam', writes: ['requests'] } } })).toEqual([
        'f_insert (m/2-second.ts) writes audit, which its FUNCTION_OWNERS entry does not list',
      ]);
      expect(check({ owners: { ...owners, f_read: { owner: 'src/modules/pam', writes: ['requests'] } } })).toEqual([
        'f_read (m/1-first.ts) is listed as writing requests, which its body does not write',
      ]);
    });

    it('names a function owned by a module other than its main table’s owner, and one that writes only others’ tables', () => {
      expect(check({ owners: { ...owners, f_insert: { owner: 'src/modules/audit', writes: ['requests'], onBehalfOf: { audit: 'x' } } }, statements: new Map() })).toEqual([
        'f_insert (m/2-second.ts) is owned by src/modules/audit but writes requests, owned by src/modules/pam: the owner of its main table owns it, other tables go in onBehalfOf',
        'f_insert (m/2-second.ts) lists audit in onBehalfOf, but its own owner src/modules/audit owns that table: list it in writes',
      ]);
      expect(check({ owners: { ...owners, f_insert: { owner: 'src/modules/reports', onBehalfOf: { requests: 'x', audit: 'y' } } }, statements: new Map() })).toEqual([
        'f_insert (m/2-second.ts) writes only other modules’ tables: it belongs to the owner of its main table',
      ]);
    });

    it('names the file that calls a changing function from outside its owner, also through a function that only calls it', () => {
      const statements = new Map([
        ['src/modules/agent/ingest.repository.ts', 'SELECT f_insert($1);'],
        ['src/modules/agent/batch.repository.ts', 'SELECT f_batch($1);'],
        ['src/modules/reports/count.repository.ts', 'SELECT f_read();'],
      ]);
      expect(check({ statements })).toEqual([
        "f_batch (owned by src/modules/pam, writes audit, requests) is called from src/modules/agent/batch.repository.ts: call src/modules/pam's exported service instead",
        "f_insert (owned by src/modules/pam, writes audit, requests) is called from src/modules/agent/ingest.repository.ts: call src/modules/pam's exported service instead",
      ]);
      expect(check({ statements, pendingCallers: { 'src/modules/agent/ingest.repository.ts': { f_insert: 'moving' }, 'src/modules/agent/batch.repository.ts': { f_batch: 'moving' } } })).toEqual([]);
    });

    it('refuses a function created under a computed name unless its migration is listed', () => {
      const computed = migration('m/3-computed.ts', `DO $d$ BEGIN EXECUTE format('CREATE OR REPLACE FUNCTION public.%I() RETURNS void LANGUAGE sql AS $f$ SELECT 1 $f$', 'f_read'); END $d$;`);
      expect(() => liveFunctions([...schema, computed], {})).toThrow('m/3-computed.ts creates a function whose name is computed');
      expect(liveFunctions([...schema, computed], { 'm/3-computed.ts': ['f_read'] }).get('f_read')!.file).toBe('m/1-first.ts');
      expect(() => liveFunctions([...schema, computed], { 'm/3-computed.ts': ['f_new'] })).toThrow('re-creates f_new under a computed name');
    });
  });
});
