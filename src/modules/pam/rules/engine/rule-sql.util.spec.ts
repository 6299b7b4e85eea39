import { compileRule, matchesRule } from './rule-engine';
import { globToPosixRegex } from './glob.util';
import { observationFromRow, ruleToSql, type StoredObservationRow, type SqlRuleInput } from './rule-sql.util';

function sql(criteria: SqlRuleInput, params: unknown[] = []) {
  return { text: ruleToSql(criteria, 'er', params), params };
}

describe('ruleToSql', () => {
  it('restricts executable and user rules to UAC requests and tool-action rules to tool actions, never JIT requests', () => {
    const executable = sql({ matchSigner: 'Acme' });
    expect(executable.text).toContain('COALESCE(er.flow_type::text = $1::text, FALSE)');
    expect(executable.params[0]).toBe('uac_intercept');
    expect(sql({ matchRiskTier: 2 }).params[0]).toBe('ai_tool_action');
    expect(sql({ matchUser: 'bob', matchNegate: ['user'] }).params[0]).toBe('uac_intercept');
  });

  it('appends its parameters after those already in the list', () => {
    const { text, params } = sql({ matchSigner: 'Acme', matchUser: 'bob' }, ['existing']);
    expect(params).toEqual(['existing', 'uac_intercept', 'acme', 'bob']);
    expect(text).toContain('$2::text');
    expect(text).toContain('$3::text');
    expect(text).toContain('$4::text');
    expect(text).not.toContain('$1');
  });

  it('never puts a value into the SQL text', () => {
    const hostile = "x'); DROP TABLE elevation_requests; --";
    const { text, params } = sql({
      matchSigner: hostile,
      matchPathGlob: hostile,
      matchParentImage: hostile,
      matchCommandLine: hostile,
      matchUser: hostile,
      matchHash: hostile,
      siteId: hostile,
      timeWindow: { start: '09:00', end: '17:00', timezone: 'Europe/Paris' },
    });
    expect(text).not.toMatch(/drop/i);
    expect(text).not.toContain('Europe/Paris');
    expect(params).toContain('Europe/Paris');
    // Signer, path, parent image, command line, user, hash and site each travel as a parameter.
    expect(params.filter((param) => typeof param === 'string' && /drop table/i.test(param))).toHaveLength(7);
  });

  it('refuses an alias that is not a plain identifier', () => {
    expect(() => ruleToSql({ matchSigner: 'x' }, 'er; DROP TABLE x', [])).toThrow(/alias/);
    expect(() => ruleToSql({ matchSigner: 'x' }, '', [])).toThrow(/alias/);
  });

  it('compares exact criteria with ASCII-only folding on both sides', () => {
    const { text, params } = sql({ matchSigner: 'ÉDITEUR Acme' });
    expect(text).toContain("(COALESCE(er.target_executable_signer, '') <> '' AND (lower(er.target_executable_signer COLLATE \"C\") = $2::text))");
    expect(params[1]).toBe('Éditeur acme');
  });

  it('maps each criterion to its column', () => {
    const { text } = sql({
      matchHash: 'A'.repeat(64),
      matchUser: 'u',
      matchCommandLine: 'c',
      matchPathGlob: 'p',
      matchParentImage: 'q',
    });
    expect(text).toContain('lower(er.target_executable_hash COLLATE "C") =');
    expect(text).toContain('lower(er.subject_username COLLATE "C") =');
    expect(text).toContain('strpos(lower(er.command_line COLLATE "C"), $');
    expect(text).toContain(`(replace(er.target_executable_path, chr(92), '/') COLLATE "C") ~* $`);
    expect(text).toContain(`(replace(er.parent_image, chr(92), '/') COLLATE "C") ~* $`);
    const tool = sql({ matchToolName: 'Run_Script', matchRiskTier: 3 });
    expect(tool.text).toContain('lower(er.tool_name COLLATE "C") =');
    expect(tool.text).toContain('(er.risk_tier IS NOT NULL AND (er.risk_tier = $2::int))');
    expect(tool.params).toEqual(['ai_tool_action', 3, 'run_script']);
  });

  it('passes globs as the regular expression of globToPosixRegex', () => {
    const { params } = sql({ matchPathGlob: 'C:\\**\\Setup (1).exe' });
    expect(params[1]).toBe(globToPosixRegex('C:\\**\\Setup (1).exe'));
  });

  it('negates inside the missing-data guard, so missing values never match', () => {
    const { text } = sql({ matchSigner: 'Acme', matchRiskTier: undefined, matchNegate: ['signer'] });
    expect(text).toContain("(COALESCE(er.target_executable_signer, '') <> '' AND NOT (lower(");
    const tier = sql({ matchRiskTier: 0, matchNegate: ['riskTier'] });
    expect(tier.text).toContain('(er.risk_tier IS NOT NULL AND NOT (er.risk_tier = $2::int))');
  });

  it('makes a directory-group criterion match nothing, negated or not', () => {
    expect(sql({ matchAdGroup: 'Admins' }).text).toMatch(/ AND FALSE/);
    expect(sql({ matchAdGroup: 'Admins', matchNegate: ['adGroup'] }).text).toMatch(/ AND FALSE/);
  });

  it('needs the members of a signer group and compares them folded', () => {
    expect(() => sql({ matchSignerGroupId: 'g' })).toThrow(/signerGroupSigners/);
    const { text, params } = sql({ matchSignerGroupId: 'g', signerGroupSigners: ['Acme', 'CONTOSO'] });
    expect(text).toContain('lower(er.target_executable_signer COLLATE "C") = ANY($2::text[])');
    expect(params[1]).toEqual(['acme', 'contoso']);
  });

  it('restricts a site rule to its site and leaves organization-wide rules unrestricted', () => {
    const site = sql({ matchUser: 'u', siteId: 'AAAAAAAA-0000-4000-8000-000000000000' });
    expect(site.text).toContain('(er.site_id IS NOT NULL AND lower(er.site_id::text) = $2::text)');
    expect(site.params[1]).toBe('aaaaaaaa-0000-4000-8000-000000000000');
    expect(sql({ matchUser: 'u', siteId: null }).text).not.toContain('site_id');
  });

  it('reads a daytime window in the rule zone at the request time', () => {
    const { text, params } = sql({
      matchUser: 'u',
      timeWindow: { start: '09:00', end: '17:30', days: [1, 5], timezone: 'Asia/Kolkata' },
    });
    expect(text).toContain('(er.requested_at AT TIME ZONE $3::text)');
    expect(text).toContain('BETWEEN $4::int AND $5::int) AND EXTRACT(DOW FROM');
    expect(params.slice(2)).toEqual(['Asia/Kolkata', 540, 1050, [1, 5]]);
  });

  it('gives the after-midnight part of an overnight window to the previous day', () => {
    const { text, params } = sql({ matchUser: 'u', timeWindow: { start: '22:00', end: '06:00', days: [5] } });
    expect(text).toContain('>= $4::int AND EXTRACT(DOW FROM');
    expect(text).toContain('<= $5::int AND ((EXTRACT(DOW FROM');
    expect(text).toContain('+ 6) % 7) = ANY($6::int[])');
    expect(params.slice(2)).toEqual(['UTC', 1320, 360, [5]]);
  });

  it('omits the day test when the window applies every day', () => {
    const { text } = sql({ matchUser: 'u', timeWindow: { start: '09:00', end: '17:00' } });
    expect(text).not.toContain('DOW');
  });

  it('refuses an invalid time window', () => {
    expect(() => sql({ matchUser: 'u', timeWindow: { start: '9', end: '17:00' } })).toThrow(RangeError);
  });
});

describe('observationFromRow', () => {
  const row: StoredObservationRow = {
    flow_type: 'uac_intercept',
    site_id: 'aaaaaaaa-0000-4000-8000-000000000000',
    target_executable_signer: 'Acme',
    target_executable_hash: 'a'.repeat(64),
    target_executable_path: 'C:\\a.exe',
    parent_image: 'explorer.exe',
    command_line: 'a.exe /s',
    subject_username: 'bob',
    tool_name: null,
    risk_tier: null,
    requested_at: new Date('2025-01-15T12:00:00Z'),
  };

  it('maps every column to the observation field the engine reads, with no directory groups', () => {
    expect(observationFromRow(row)).toEqual({
      flowType: 'uac_intercept',
      siteId: row.site_id,
      signer: 'Acme',
      hash: row.target_executable_hash,
      path: 'C:\\a.exe',
      parentImage: 'explorer.exe',
      commandLine: 'a.exe /s',
      user: 'bob',
      adGroups: [],
      toolName: null,
      riskTier: null,
      at: row.requested_at,
    });
  });

  it('makes a directory-group rule match no stored row, as the SQL does', () => {
    const definition = {
      id: 'r',
      name: 'r',
      verdict: 'auto_approve' as const,
      priority: 1,
      enabled: true,
      siteId: null,
      approvalDurationMinutes: null,
      createdAt: new Date(),
      matchAdGroup: 'Admins',
      matchNegate: ['adGroup' as const],
    };
    expect(matchesRule(compileRule(definition, new Map()), observationFromRow(row))).toBe(false);
  });
});
