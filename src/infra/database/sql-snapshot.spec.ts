/**
 * The SQL snapshot of src/queries/ (scripts/sql-snapshot.js) is what the code issues: a change
 * to a statement shows in review as a change to a .sql file, and a forgotten regeneration fails here.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const snapshot = require('../../../scripts/sql-snapshot.js') as {
  stale(): string[];
  render(): Map<string, string>;
  statementsOf(rel: string, text: string): { where: string; sql: string }[];
};

describe('SQL snapshot', () => {
  it('matches the statements of the code (run npm run sql:snapshot when this fails)', () => {
    const stale = snapshot.stale();
    if (stale.length) throw new Error(`The SQL snapshot is stale; run npm run sql:snapshot and commit src/queries/. Stale files:\n${stale.join('\n')}`);
    expect(stale).toEqual([]);
  });

  it('records a statement with the method that holds it, interpolations as ${…}, and statements kept in constants', () => {
    const text = [
      "const ORDER = 'ORDER BY id';",
      'const LIST = `SELECT id FROM t WHERE a = $1`;',
      'class ThingRepository {',
      '  constructor(private readonly db: DbService) {}',
      '  find(id: string) { return this.db.one(`SELECT * FROM t WHERE id = $1 ${ORDER}`, [id]); }',
      "  save(insert: boolean) { return this.db.exec(insert ? 'INSERT INTO t (a) VALUES ($1)' : 'UPDATE t SET a = $1', []); }",
      "  note() { return 'Select a thing'; }",
      '}',
    ].join('\n');
    expect(snapshot.statementsOf('src/x.repository.ts', text)).toEqual([
      { where: 'LIST', sql: 'SELECT id FROM t WHERE a = $1;' },
      { where: 'ThingRepository.find', sql: 'SELECT * FROM t WHERE id = $1 ${…};' },
      { where: 'ThingRepository.save', sql: 'INSERT INTO t (a) VALUES ($1);' },
      { where: 'ThingRepository.save', sql: 'UPDATE t SET a = $1;' },
    ]);
  });

  it('renders the same files twice in a row (the output is deterministic)', () => {
    expect([...snapshot.render()]).toEqual([...snapshot.render()]);
  });
});
