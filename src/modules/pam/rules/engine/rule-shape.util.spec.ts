import { isToolActionShaped, normaliseCriteria, validateRuleShape } from './rule-shape.util';
import type { PamRuleCriteria, PamVerdict } from './rule.types';

const HASH = 'A'.repeat(32) + 'f'.repeat(32);

function shape(criteria: PamRuleCriteria, verdict: PamVerdict = 'auto_approve') {
  return validateRuleShape({ ...criteria, verdict });
}

function expectInvalid(criteria: PamRuleCriteria, message: RegExp, verdict?: PamVerdict) {
  const result = shape(criteria, verdict);
  expect(result).toEqual({ ok: false, code: 'invalid_rule_shape', message: expect.stringMatching(message) });
}

describe('validateRuleShape', () => {
  describe('rule 1: at least one identifying criterion', () => {
    it('rejects a rule with nothing', () => {
      expectInvalid({}, /at least one identifying criterion/);
    });

    it('rejects a rule with only a time window', () => {
      expectInvalid({ timeWindow: { start: '09:00', end: '17:00' } }, /at least one identifying criterion/);
    });

    it('rejects blank strings, which identify nothing', () => {
      expectInvalid({ matchSigner: '   ', matchUser: '' }, /at least one identifying criterion/);
    });

    it.each<[string, PamRuleCriteria]>([
      ['signer', { matchSigner: 'Microsoft Corporation' }],
      ['signer group', { matchSignerGroupId: '6f1d7c36-4c1e-4d59-9d0a-0d0c8f4f2f10' }],
      ['hash', { matchHash: HASH }],
      ['path', { matchPathGlob: 'C:\\Apps\\*.exe' }],
      ['parent image', { matchParentImage: '**\\explorer.exe' }],
      ['command line', { matchCommandLine: '--silent' }],
      ['user', { matchUser: 'CORP\\alice' }],
      ['directory group', { matchAdGroup: 'Helpdesk' }],
      ['tool name', { matchToolName: 'read_file' }],
      ['risk tier', { matchRiskTier: 0 }],
    ])('accepts a rule identified by %s alone', (_label, criteria) => {
      expect(shape(criteria)).toEqual({ ok: true });
    });
  });

  describe('rule 2: executable-shaped or tool-action-shaped, never both', () => {
    it('rejects a signer with a tool name', () => {
      expectInvalid({ matchSigner: 'Acme', matchToolName: 'read_file' }, /executables \(signer\) or tool actions \(tool name\)/);
    });

    it('rejects a path with a risk tier, even tier 0', () => {
      expectInvalid({ matchPathGlob: 'C:\\x.exe', matchRiskTier: 0 }, /not both/);
    });

    it('accepts user and directory group with either shape', () => {
      expect(shape({ matchUser: 'bob', matchAdGroup: 'Admins', matchSigner: 'Acme' })).toEqual({ ok: true });
      expect(shape({ matchUser: 'bob', matchAdGroup: 'Admins', matchToolName: 'read_file' })).toEqual({ ok: true });
    });
  });

  describe('rule 3: signer and signer group are mutually exclusive', () => {
    it('rejects both together', () => {
      expectInvalid(
        { matchSigner: 'Acme', matchSignerGroupId: '6f1d7c36-4c1e-4d59-9d0a-0d0c8f4f2f10' },
        /mutually exclusive/,
      );
    });
  });

  describe('negation keys', () => {
    it('accepts negation of criteria that are set', () => {
      expect(shape({ matchSigner: 'Acme', matchUser: 'bob', matchNegate: ['signer', 'user'] })).toEqual({ ok: true });
    });

    it('rejects an unknown key', () => {
      expectInvalid({ matchSigner: 'Acme', matchNegate: ['publisher' as never] }, /"publisher" is not one of/);
    });

    it('rejects negating a criterion that is not set', () => {
      expectInvalid({ matchSigner: 'Acme', matchNegate: ['hash'] }, /names hash, but matchHash is not set/);
    });

    it('rejects a matchNegate that is not a list', () => {
      expectInvalid({ matchSigner: 'Acme', matchNegate: 'signer' as never }, /must be a list/);
    });

    it('accepts a null or empty list', () => {
      expect(shape({ matchSigner: 'Acme', matchNegate: null })).toEqual({ ok: true });
      expect(shape({ matchSigner: 'Acme', matchNegate: [] })).toEqual({ ok: true });
    });
  });

  describe('rule 5: ignore is invalid for tool-action rules', () => {
    it('rejects ignore with a tool name or a tier', () => {
      expectInvalid({ matchToolName: 'read_file' }, /verdict ignore is not allowed/, 'ignore');
      expectInvalid({ matchRiskTier: 0 }, /verdict ignore is not allowed/, 'ignore');
    });

    it('accepts ignore for executable rules and other verdicts for tool-action rules', () => {
      expect(shape({ matchSigner: 'Acme' }, 'ignore')).toEqual({ ok: true });
      expect(shape({ matchToolName: 'read_file' }, 'auto_deny')).toEqual({ ok: true });
      expect(shape({ matchToolName: 'read_file' }, 'require_approval')).toEqual({ ok: true });
    });
  });

  describe('rule 6: the tier must be reachable by the tool selector', () => {
    it('rejects an unreachable tier with its own code and the valid tiers', () => {
      expect(shape({ matchToolName: 'run_script', matchRiskTier: 1 })).toEqual({
        ok: false,
        code: 'pam_rule_risk_tier_unreachable',
        message: 'risk tier 1 is unreachable for tool run_script; valid tiers: 3, 4',
        validTiers: [3, 4],
      });
    });

    it('accepts a reachable tier, whatever the case of the tool name', () => {
      expect(shape({ matchToolName: 'RUN_SCRIPT', matchRiskTier: 3 })).toEqual({ ok: true });
    });

    it('accepts any tier for a tool the registry does not know', () => {
      expect(shape({ matchToolName: 'format_disk', matchRiskTier: 1 })).toEqual({ ok: true });
    });

    it('accepts any tier 0 to 4 without a tool name', () => {
      for (const tier of [0, 1, 2, 3, 4]) expect(shape({ matchRiskTier: tier })).toEqual({ ok: true });
    });

    it('does not check a negated tier', () => {
      expect(shape({ matchToolName: 'read_file', matchRiskTier: 4, matchNegate: ['riskTier'] })).toEqual({ ok: true });
    });

    it('checks a negated tool name against the other tools', () => {
      expect(shape({ matchToolName: 'read_file', matchRiskTier: 4, matchNegate: ['toolName'] })).toEqual({ ok: true });
    });

    it('is only reported once the shape is otherwise valid', () => {
      expect(shape({ matchToolName: 'read_file', matchRiskTier: 4 }, 'ignore')).toMatchObject({
        code: 'invalid_rule_shape',
      });
    });
  });

  describe('malformed values', () => {
    it('rejects a hash that is not 64 hexadecimal characters', () => {
      expectInvalid({ matchHash: 'abc' }, /SHA-256/);
      expectInvalid({ matchHash: 'g'.repeat(64) }, /SHA-256/);
      expectInvalid({ matchHash: 'a'.repeat(65) }, /SHA-256/);
    });

    it('accepts a hash in either case', () => {
      expect(shape({ matchHash: HASH })).toEqual({ ok: true });
    });

    it('rejects a tier outside 0 to 4 or not an integer', () => {
      expectInvalid({ matchRiskTier: 5 }, /integer from 0 to 4/);
      expectInvalid({ matchRiskTier: -1 }, /integer from 0 to 4/);
      expectInvalid({ matchRiskTier: 1.5 }, /integer from 0 to 4/);
    });

    it('rejects an invalid time window', () => {
      expectInvalid({ matchSigner: 'Acme', timeWindow: { start: '25:00', end: '06:00' } }, /timeWindow.start/);
    });

    it('rejects an unknown verdict', () => {
      expectInvalid({ matchSigner: 'Acme' }, /verdict must be one of/, 'allow' as PamVerdict);
    });

    it('reports every shape problem in one message', () => {
      const result = shape({ matchSigner: 'Acme', matchSignerGroupId: 'g', matchToolName: 'x' }, 'ignore');
      expect(result.ok).toBe(false);
      const message = (result as { message: string }).message;
      expect(message).toMatch(/not both/);
      expect(message).toMatch(/mutually exclusive/);
      expect(message).toMatch(/verdict ignore/);
    });
  });
});

describe('normaliseCriteria', () => {
  it('trims strings, turns blank ones into null and lower-cases the hash', () => {
    expect(
      normaliseCriteria({ matchSigner: '  Acme Corp ', matchUser: '   ', matchHash: ` ${HASH} `, matchPathGlob: '' }),
    ).toEqual({ matchSigner: 'Acme Corp', matchUser: null, matchHash: HASH.toLowerCase(), matchPathGlob: null });
  });

  it('leaves absent properties absent, for partial updates', () => {
    expect(normaliseCriteria({ matchSigner: 'Acme' })).toEqual({ matchSigner: 'Acme' });
  });

  it('keeps other properties of the input', () => {
    expect(normaliseCriteria({ matchSigner: 'Acme', name: 'n', priority: 5 })).toEqual({
      matchSigner: 'Acme',
      name: 'n',
      priority: 5,
    });
  });

  it('de-duplicates negation keys and turns an empty list into null', () => {
    expect(normaliseCriteria({ matchNegate: ['signer', 'signer', 'user'] }).matchNegate).toEqual(['signer', 'user']);
    expect(normaliseCriteria({ matchNegate: [] }).matchNegate).toBeNull();
  });

  it('trims the window, sorts and de-duplicates its days, and drops a blank zone', () => {
    expect(
      normaliseCriteria({ timeWindow: { start: ' 09:00', end: '17:00 ', days: [5, 1, 5], timezone: ' ' } }).timeWindow,
    ).toEqual({ start: '09:00', end: '17:00', days: [1, 5], timezone: null });
  });

  it('does not modify its input', () => {
    const input = { matchSigner: ' Acme ', matchNegate: ['signer' as const, 'signer' as const] };
    normaliseCriteria(input);
    expect(input).toEqual({ matchSigner: ' Acme ', matchNegate: ['signer', 'signer'] });
  });

  it('leaves problems for validateRuleShape to report', () => {
    const normalised = normaliseCriteria({ matchSigner: 'Acme', matchNegate: ['bogus' as never] });
    expect(shape(normalised)).toMatchObject({ ok: false, code: 'invalid_rule_shape' });
  });
});

describe('isToolActionShaped', () => {
  it('is true for a tool name or a tier, including tier 0', () => {
    expect(isToolActionShaped({ matchToolName: 'read_file' })).toBe(true);
    expect(isToolActionShaped({ matchRiskTier: 0 })).toBe(true);
    expect(isToolActionShaped({ matchUser: 'bob' })).toBe(false);
    expect(isToolActionShaped({ matchToolName: ' ' })).toBe(false);
  });
});
