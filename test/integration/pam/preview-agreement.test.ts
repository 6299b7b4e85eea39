import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Client } from 'pg';
import { compileRule, matchesPrepared, matchesRule, prepareObservation, type PreparedObservation } from '../../../src/modules/pam/rules/engine/rule-engine';
import { observationFromRow, ruleToSql, type StoredObservationRow, type SqlRuleInput } from '../../../src/modules/pam/rules/engine/rule-sql.util';
import { NEGATABLE_KEYS, type FlowType, type NegatableKey, type PamRuleDefinition } from '../../../src/modules/pam/rules/engine/rule.types';
import { previewMatchSql } from '../../../src/modules/pam/rules/preview/preview-sql.util';

/**
 * Rule preview runs the match in PostgreSQL (`ruleToSql`, and the preview's cheaper
 * `previewMatchSql` around it); the decision chain runs it in JavaScript (`matchesRule`).
 * A preview is only honest if both give the same answer on every row, so this property test
 * stores thousands of random requests in a real PostgreSQL, draws thousands of random rules
 * (negation, time windows in zones with odd offsets and daylight-saving changes, globs full
 * of characters that mean something to regular expressions and LIKE, case and non-ASCII
 * letters, missing values), runs each rule's SQL through the application role under
 * row-level security, and compares the matched rows with the in-memory engine's.
 */

const ROWS = 2000;
const RULE_BATCHES = 40;
const RULES_PER_BATCH = 50;

const id = {
  partner: randomUUID(),
  org: randomUUID(),
  siteA: randomUUID(),
  siteB: randomUUID(),
  deviceA: randomUUID(),
  deviceB: randomUUID(),
  groupVendors: randomUUID(),
  groupOdd: randomUUID(),
};

const SIGNER_GROUPS = new Map<string, string[]>([
  [id.groupVendors, ['Acme Corp', 'CONTOSO LTD', 'Éditeur SA']],
  [id.groupOdd, ['a.b*c', '100%_sure', '']],
]);

// Pools shared by rows and rules, in several spellings, so that rules match some rows and miss others.
const SIGNERS = ['Acme Corp', 'acme corp', 'ACME CORP', 'Contoso Ltd', 'Éditeur SA', 'éditeur sa', 'a.b*c', '100%_sure', 'İstanbul Yazılım'];
const USERS = ['CORP\\alice', 'corp\\ALICE', 'bob', 'Bob', 'ßtraße', 'user_1', 'user%'];
const HASHES = ['0'.repeat(64), 'ab'.repeat(32), 'deadbeef'.repeat(8)];
const TOOLS = ['run_script', 'RUN_SCRIPT', 'read_file', 'Read_File', 'tool.v2', 'unknown_tool'];
const SEGMENTS = [
  'C:',
  'c:',
  'Program Files',
  'PROGRAM FILES (x86)',
  'Vendor',
  'vendor.v2',
  'Setup (1).exe',
  'setup[1].exe',
  'a+b',
  '$dollar^caret',
  '{brace}|pipe',
  '100%',
  'under_score',
  'Ünïcode',
  'emoji😀x',
  '𝒳',
  'star*',
  'q?mark',
  'x.exe',
  'X.EXE',
  'tools',
  '',
];
const COMMAND_PIECES = ['install', 'INSTALL', '/S', '--quiet', '%TEMP%', '_x_', 'É', '(1)', '.*', '[a]', ' '];
const ZONES = [
  'UTC',
  'Europe/Paris',
  'Europe/Dublin',
  'America/New_York',
  'America/St_Johns',
  'America/Sao_Paulo',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Pacific/Kiritimati',
  'Pacific/Pago_Pago',
];
// Instants around daylight-saving changes of the zones above, where wall clocks jump or repeat.
const EDGES = ['2025-03-09T07:00:00Z', '2025-03-30T01:00:00Z', '2025-10-26T01:00:00Z', '2025-11-02T06:00:00Z', '2025-04-05T15:00:00Z', '2025-09-27T14:00:00Z', '2024-12-31T23:59:00Z'].map(Date.parse);

const STATUSES = ['pending', 'approved', 'auto_approved', 'denied', 'expired', 'revoked', 'actuating'];
const FLOWS: FlowType[] = ['uac_intercept', 'tech_jit_admin', 'ai_tool_action'];

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 3 });
/** Usually unset: a rule sets a few criteria, so that it matches some rows. */
const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: arb, weight: 1 });
const pathArb = fc
  .tuple(fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 5 }), fc.constantFrom('\\', '/'))
  .map(([parts, separator]) => parts.join(separator));
const instantArb = fc.oneof(
  fc.integer({ min: Date.parse('2024-01-01T00:00:00Z'), max: Date.parse('2026-12-31T00:00:00Z') }),
  fc.tuple(fc.constantFrom(...EDGES), fc.integer({ min: -90, max: 90 })).map(([edge, minutes]) => edge + minutes * 60_000 + 17_000),
);

interface Row extends StoredObservationRow {
  id: string;
  status: string;
}

const rowArb: fc.Arbitrary<Omit<Row, 'id'>> = fc.record({
  flow_type: fc.constantFrom(...FLOWS),
  status: fc.constantFrom(...STATUSES),
  site_id: fc.constantFrom(id.siteA, id.siteB),
  target_executable_signer: maybe(fc.oneof(fc.constantFrom(...SIGNERS), fc.constant(''))),
  target_executable_hash: maybe(fc.constantFrom(...HASHES)),
  target_executable_path: maybe(fc.oneof(pathArb, fc.constant(''))),
  parent_image: maybe(pathArb),
  command_line: maybe(fc.array(fc.constantFrom(...COMMAND_PIECES), { maxLength: 5 }).map((pieces) => pieces.join(''))),
  subject_username: maybe(fc.constantFrom(...USERS)),
  tool_name: maybe(fc.oneof(fc.constantFrom(...TOOLS), fc.constant(''))),
  risk_tier: maybe(fc.integer({ min: 0, max: 4 })),
  requested_at: instantArb.map((ms) => new Date(ms)),
});

const globSegmentArb = fc.oneof(
  fc.constantFrom(...SEGMENTS.filter((s) => s !== '')),
  fc.constantFrom('*', '**', '***', '?', '*.exe', '*.EXE', 'set*', '*(1)*', '*%*', '*_*', '??', 'x.ex?', 'v*.v?', '[*]*', '*😀*', '?𝒳'),
);
const globArb = fc
  .tuple(fc.array(globSegmentArb, { minLength: 1, maxLength: 5 }), fc.constantFrom('\\', '/'))
  .map(([parts, separator]) => parts.join(separator));
const hhmm = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
const windowArb = fc.record({
  start: hhmm,
  end: hhmm,
  days: fc.option(fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 7 }), { nil: null }),
  timezone: fc.constantFrom(...ZONES),
});

type Criteria = SqlRuleInput;

/**
 * Globs made from stored values, so that they match some rows: segments kept, re-cased, turned
 * into `*` or `?` patterns, and runs of segments replaced by `**`, joined by either separator.
 */
function globFromValues(values: readonly string[]): fc.Arbitrary<string> {
  const segmentEdit = fc.constantFrom('keep', 'upper', 'star', 'prefix*', '*suffix', 'one?');
  return fc
    .tuple(fc.constantFrom(...values), fc.array(segmentEdit, { minLength: 8, maxLength: 8 }), fc.nat({ max: 8 }), fc.nat({ max: 3 }), fc.boolean(), fc.constantFrom('\\', '/'))
    .map(([value, edits, at, span, globstar, separator]) => {
      const segments = value.split(/[\\/]/).map((segment, i) => {
        const chars = [...segment];
        switch (edits[i % edits.length]) {
          case 'upper':
            return segment.toUpperCase();
          case 'star':
            return '*';
          case 'prefix*':
            return `${chars.slice(0, 2).join('')}*`;
          case '*suffix':
            return `*${chars.slice(-2).join('')}`;
          case 'one?':
            return chars.length > 0 ? ['?', ...chars.slice(1)].join('') : '?';
          default:
            return segment;
        }
      });
      if (globstar) segments.splice(Math.min(at, segments.length), span, '**');
      return segments.join(separator);
    });
}

function ruleArbitrary(paths: readonly string[], parents: readonly string[]): fc.Arbitrary<Criteria> {
  const executableArb: fc.Arbitrary<Criteria> = fc
    .record({
      matchSigner: rarely(fc.constantFrom(...SIGNERS)),
      matchSignerGroupId: rarely(fc.constantFrom(id.groupVendors, id.groupOdd)),
      matchHash: rarely(fc.constantFrom(...HASHES, 'AB'.repeat(32))),
      matchPathGlob: rarely(fc.oneof(globArb, globFromValues(paths))),
      matchParentImage: rarely(fc.oneof(globArb, globFromValues(parents))),
      matchCommandLine: rarely(fc.array(fc.constantFrom(...COMMAND_PIECES), { minLength: 1, maxLength: 2 }).map((pieces) => pieces.join(''))),
      matchUser: rarely(fc.constantFrom(...USERS)),
      matchAdGroup: fc.option(fc.constant('Domain Admins'), { nil: null, freq: 12 }),
    })
    .map((criteria) => (criteria.matchSigner && criteria.matchSignerGroupId ? { ...criteria, matchSignerGroupId: null } : criteria));

  const toolArb: fc.Arbitrary<Criteria> = fc.record({
    matchToolName: rarely(fc.constantFrom(...TOOLS)),
    matchRiskTier: rarely(fc.integer({ min: 0, max: 4 })),
    matchUser: fc.option(fc.constantFrom(...USERS), { nil: null, freq: 6 }),
  });

  return fc
    .tuple(
      fc.oneof({ arbitrary: executableArb, weight: 3 }, { arbitrary: toolArb, weight: 1 }),
      rarely(windowArb),
      fc.option(fc.constantFrom(id.siteA, id.siteB, id.siteB.toUpperCase()), { nil: null, freq: 4 }),
      fc.uniqueArray(fc.constantFrom(...NEGATABLE_KEYS), { maxLength: 4 }),
    )
    .map(([criteria, timeWindow, siteId, negate]) => {
      const rule: Criteria = { ...criteria, timeWindow, siteId };
      // Negate only criteria the rule sets, as the shape rules require.
      const set = negate.filter((key) => {
        const field = ({ signer: 'matchSigner', signerGroup: 'matchSignerGroupId', hash: 'matchHash', pathGlob: 'matchPathGlob', parentImage: 'matchParentImage', commandLine: 'matchCommandLine', user: 'matchUser', adGroup: 'matchAdGroup', toolName: 'matchToolName', riskTier: 'matchRiskTier' } as const)[key as NegatableKey];
        const value = rule[field];
        return value !== null && value !== undefined;
      });
      return { ...rule, matchNegate: set.length > 0 ? set : null };
    });
}

function definition(criteria: Criteria, index: number): PamRuleDefinition {
  return {
    ...criteria,
    id: `rule-${index}`,
    name: `rule ${index}`,
    verdict: 'require_approval',
    priority: index,
    enabled: true,
    siteId: criteria.siteId ?? null,
    approvalDurationMinutes: null,
    createdAt: new Date(0),
  };
}

describe('rule preview SQL and the in-memory engine', () => {
  let owner: Client;
  let app: Client;
  let rows: Row[];
  /** matchesRule(rule, o) is matchesPrepared(rule, prepareObservation(o)); preparing each row once keeps thousands of rules fast. */
  let prepared: { id: string; observation: PreparedObservation }[];

  beforeAll(async () => {
    owner = new Client({ connectionString: process.env.DATABASE_URL });
    app = new Client({ connectionString: process.env.DATABASE_APP_URL });
    await owner.connect();
    await app.connect();
    const tag = id.org.slice(0, 8);
    await owner.query(`INSERT INTO partners (id, name) VALUES ($1, $2)`, [id.partner, `Preview agreement ${tag}`]);
    await owner.query(`INSERT INTO organizations (id, partner_id, name) VALUES ($1, $2, 'Preview agreement')`, [id.org, id.partner]);
    await owner.query(`INSERT INTO sites (id, org_id, name) VALUES ($1, $3, 'A'), ($2, $3, 'B')`, [id.siteA, id.siteB, id.org]);
    await owner.query(`INSERT INTO devices (id, org_id, site_id, hostname) VALUES ($1, $3, $4, 'A'), ($2, $3, $5, 'B')`, [id.deviceA, id.deviceB, id.org, id.siteA, id.siteB]);

    const generated = fc.sample(rowArb, { numRuns: ROWS, seed: 20251122 });
    rows = [];
    for (let start = 0; start < generated.length; start += 500) {
      const chunk = generated.slice(start, start + 500);
      const params: unknown[] = [];
      const tuples = chunk.map((r) => {
        const values = [id.org, r.site_id, r.site_id === id.siteA ? id.deviceA : id.deviceB, r.flow_type, r.status, r.target_executable_signer, r.target_executable_hash, r.target_executable_path, r.parent_image, r.command_line, r.subject_username, r.tool_name, r.risk_tier, r.requested_at];
        return `(${values.map((value) => `$${params.push(value)}`).join(', ')})`;
      });
      const inserted = await owner.query<Row>(
        `INSERT INTO elevation_requests (org_id, site_id, device_id, flow_type, status, target_executable_signer, target_executable_hash,
           target_executable_path, parent_image, command_line, subject_username, tool_name, risk_tier, requested_at)
         VALUES ${tuples.join(', ')}
         RETURNING id, status, flow_type, site_id, target_executable_signer, target_executable_hash, target_executable_path, parent_image,
                   command_line, subject_username, tool_name, risk_tier, requested_at`,
        params,
      );
      rows.push(...inserted.rows);
    }
    prepared = rows.map((row) => ({ id: row.id, observation: prepareObservation(observationFromRow(row)) }));
  }, 120_000);

  afterAll(async () => {
    await app.end();
    await owner.end();
  });

  /** Each rule's expression (both forms) as a boolean column, through the application role under the organization's RLS scope. */
  async function sqlMatches(rules: Criteria[]): Promise<{ plain: Set<string>[]; preview: Set<string>[] }> {
    const params: unknown[] = [id.org];
    const columns: string[] = [];
    rules.forEach((rule, i) => {
      const input = { ...rule, signerGroupSigners: rule.matchSignerGroupId ? SIGNER_GROUPS.get(rule.matchSignerGroupId)! : null };
      columns.push(`${ruleToSql(input, 'er', params)} AS p${i}`, `${previewMatchSql(input, 'er', params)} AS v${i}`);
    });
    await app.query('BEGIN');
    try {
      await app.query(`SELECT set_config('app.scope', 'organization', true), set_config('app.org_ids', $1, true)`, [`{${id.org}}`]);
      const result = await app.query<Record<string, unknown>>(`SELECT er.id, ${columns.join(', ')} FROM elevation_requests er WHERE er.org_id = $1`, params);
      expect(result.rows).toHaveLength(rows.length);
      const plain = rules.map((_, i) => new Set(result.rows.filter((r) => r[`p${i}`] === true).map((r) => r.id as string)));
      const preview = rules.map((_, i) => new Set(result.rows.filter((r) => r[`v${i}`] === true).map((r) => r.id as string)));
      for (const row of result.rows) {
        rules.forEach((_, i) => {
          // Never NULL, so the expression can be negated and combined freely.
          if (typeof row[`p${i}`] !== 'boolean' || typeof row[`v${i}`] !== 'boolean') throw new Error(`rule ${i} gave a non-boolean on row ${row.id}`);
        });
      }
      return { plain, preview };
    } finally {
      await app.query('ROLLBACK');
    }
  }

  function engineMatches(rule: Criteria, index: number): Set<string> {
    const compiled = compileRule(definition(rule, index), SIGNER_GROUPS);
    return new Set(prepared.filter((row) => matchesPrepared(compiled, row.observation)).map((row) => row.id));
  }

  /** The public entry point, row by row: slower, used for the hand-picked rules. */
  function engineMatchesOneByOne(rule: Criteria, index: number): Set<string> {
    const compiled = compileRule(definition(rule, index), SIGNER_GROUPS);
    return new Set(rows.filter((row) => matchesRule(compiled, observationFromRow(row))).map((row) => row.id));
  }

  function explainDisagreement(rule: Criteria, sql: Set<string>, engine: Set<string>): string | null {
    const row = rows.find((r) => sql.has(r.id) !== engine.has(r.id));
    if (!row) return null;
    return `rule ${JSON.stringify(rule)}\nrow ${JSON.stringify(row)}\nSQL says ${sql.has(row.id)}, engine says ${engine.has(row.id)}`;
  }

  it('stored a varied history: every flow type, missing values, both separators and non-ASCII text', () => {
    expect(rows).toHaveLength(ROWS);
    expect(new Set(rows.map((r) => r.flow_type))).toEqual(new Set(FLOWS));
    expect(rows.some((r) => r.target_executable_signer === null)).toBe(true);
    expect(rows.some((r) => r.target_executable_path === '')).toBe(true);
    expect(rows.some((r) => r.target_executable_path?.includes('\\') && r.target_executable_path.includes('%'))).toBe(true);
    expect(rows.some((r) => /[^\x00-\x7f]/.test(r.target_executable_path ?? ''))).toBe(true);
  });

  it('agrees with matchesRule on every row for thousands of random rules', async () => {
    const present = (values: (string | null)[]) => [...new Set(values.filter((value): value is string => !!value))];
    const ruleArb = ruleArbitrary(present(rows.map((r) => r.target_executable_path)), present(rows.map((r) => r.parent_image)));
    let rulesChecked = 0;
    let matchedSomething = 0;
    let matchedSomeButNotAll = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(ruleArb, { minLength: RULES_PER_BATCH, maxLength: RULES_PER_BATCH }), async (batch) => {
        const { plain, preview } = await sqlMatches(batch);
        batch.forEach((rule, i) => {
          const engine = engineMatches(rule, i);
          const problem = explainDisagreement(rule, plain[i], engine) ?? explainDisagreement(rule, preview[i], engine);
          if (problem) throw new Error(problem);
          rulesChecked++;
          if (engine.size > 0) matchedSomething++;
          if (engine.size > 0 && engine.size < rows.length) matchedSomeButNotAll++;
        });
      }),
      { numRuns: RULE_BATCHES, seed: 7, endOnFailure: true },
    );
    expect(rulesChecked).toBe(RULE_BATCHES * RULES_PER_BATCH);
    // The property is not vacuous: a good share of rules match some rows and not others.
    expect(matchedSomething).toBeGreaterThan(rulesChecked / 5);
    expect(matchedSomeButNotAll).toBeGreaterThan(rulesChecked / 5);
  }, 600_000);

  it('agrees on a thousand rules that test only a path or parent-image glob, half of them made from stored values', async () => {
    const present = (values: (string | null)[]) => [...new Set(values.filter((value): value is string => !!value))];
    const paths = present(rows.map((r) => r.target_executable_path));
    const parents = present(rows.map((r) => r.parent_image));
    const globRule: fc.Arbitrary<Criteria> = fc
      .tuple(fc.boolean(), fc.oneof(globArb, globFromValues(paths), globFromValues(parents)), fc.boolean())
      .map(([onPath, glob, negated]) =>
        onPath
          ? { matchPathGlob: glob, matchNegate: negated ? ['pathGlob' as const] : null }
          : { matchParentImage: glob, matchNegate: negated ? ['parentImage' as const] : null },
      );
    let matchedSomeButNotAll = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(globRule, { minLength: RULES_PER_BATCH, maxLength: RULES_PER_BATCH }), async (batch) => {
        const { plain, preview } = await sqlMatches(batch);
        batch.forEach((rule, i) => {
          const engine = engineMatches(rule, i);
          const problem = explainDisagreement(rule, plain[i], engine) ?? explainDisagreement(rule, preview[i], engine);
          if (problem) throw new Error(problem);
          if (engine.size > 0 && engine.size < rows.length) matchedSomeButNotAll++;
        });
      }),
      { numRuns: 20, seed: 11, endOnFailure: true },
    );
    expect(matchedSomeButNotAll).toBeGreaterThan(20 * RULES_PER_BATCH * 0.3);
  }, 300_000);

  it('agrees on hand-picked rules at the edges: negated criteria on missing data, overnight windows, globs with regex characters', async () => {
    const rules: Criteria[] = [
      { matchSigner: 'acme corp', matchNegate: ['signer'] },
      { matchPathGlob: 'C:\\**\\Setup (1).exe' },
      { matchPathGlob: 'c:/program files/*/setup[1].exe' },
      { matchPathGlob: '**\\100%\\**', matchNegate: ['pathGlob'] },
      { matchPathGlob: '**/under_score/**' },
      { matchParentImage: '**\\?𝒳' },
      { matchCommandLine: '%temp%' },
      { matchCommandLine: '.*', matchNegate: ['commandLine'] },
      { matchSigner: 'Contoso Ltd', timeWindow: { start: '22:00', end: '06:00', days: [5], timezone: 'Europe/Paris' } },
      { matchUser: 'bob', timeWindow: { start: '00:00', end: '23:59', days: [0], timezone: 'Pacific/Kiritimati' } },
      { matchUser: 'bob', timeWindow: { start: '01:30', end: '02:30', timezone: 'America/New_York' } },
      { matchToolName: 'run_script', matchRiskTier: 4, matchNegate: ['riskTier'] },
      { matchRiskTier: 0 },
      { matchSignerGroupId: id.groupVendors, matchNegate: ['signerGroup'] },
      { matchSignerGroupId: id.groupOdd },
      { matchAdGroup: 'Domain Admins', matchNegate: ['adGroup'] },
      { matchHash: 'AB'.repeat(32), siteId: id.siteA },
    ];
    const { plain, preview } = await sqlMatches(rules);
    rules.forEach((rule, i) => {
      const engine = engineMatchesOneByOne(rule, i);
      expect(engineMatches(rule, i)).toEqual(engine);
      expect(explainDisagreement(rule, plain[i], engine)).toBeNull();
      expect(explainDisagreement(rule, preview[i], engine)).toBeNull();
    });
    // A negated signer never matches a row without a signer.
    const negatedSigner = engineMatches(rules[0], 0);
    expect(rows.filter((r) => !r.target_executable_signer).some((r) => negatedSigner.has(r.id))).toBe(false);
    expect(plain[15].size).toBe(0);
  });
});
