import type { Path, Problem } from '../../../common/shape/path.util';

export const SCRIPT_LANGUAGES = ['powershell', 'cmd', 'bash', 'sh', 'zsh', 'python'] as const;
export type ScriptLanguage = (typeof SCRIPT_LANGUAGES)[number];
export const RUN_AS = ['system', 'user'] as const;
export type RunAs = (typeof RUN_AS)[number];
export const PARAMETER_TYPES = ['string', 'number', 'boolean', 'secret'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];
export const SEVERITIES = ['success', 'info', 'warning', 'error', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Exit codes are 32-bit: signed on Unix-likes and as reported by some tools, unsigned on Windows (0xC0000005). */
export const EXIT_CODE_MIN = -2_147_483_648;
export const EXIT_CODE_MAX = 4_294_967_295;
export const SCRIPT_LIMITS = { body: 262_144, parameters: 50, mappings: 100, parameterName: 64, parameterDescription: 500, stringDefault: 1000 } as const;
export const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export interface ScriptParameter {
  name: string;
  type: ParameterType;
  required: boolean;
  default?: string | number | boolean;
  description?: string;
}

/** One exit code, or an inclusive range of them. */
export interface ExitCodeSeverity {
  exitCode?: number;
  from?: number;
  to?: number;
  severity: Severity;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isExitCode = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= EXIT_CODE_MIN && (v as number) <= EXIT_CODE_MAX;

function unknownKeys(o: Record<string, unknown>, allowed: string[], at: Path): Problem[] {
  return Object.keys(o)
    .filter((k) => !allowed.includes(k))
    .map((k): Problem => [[...at, k], `${k} is not a known property`]);
}

/** Problems of a parameter list; paths relative to the list. */
export function parameterProblems(list: unknown): Problem[] {
  if (!Array.isArray(list)) return [[[], 'parameters must be an array']];
  const problems: Problem[] = [];
  if (list.length > SCRIPT_LIMITS.parameters) problems.push([[], `at most ${SCRIPT_LIMITS.parameters} parameters`]);
  const names = new Set<string>();
  list.forEach((p, i) => {
    if (!isObject(p)) return problems.push([[i], 'a parameter is an object']);
    problems.push(...unknownKeys(p, ['name', 'type', 'required', 'default', 'description'], [i]));
    if (typeof p.name !== 'string' || !PARAMETER_NAME.test(p.name)) problems.push([[i, 'name'], 'name is 1 to 64 of letters, digits and _, not starting with a digit']);
    else if (names.has(p.name.toLowerCase())) problems.push([[i, 'name'], `parameter ${p.name} is declared twice`]);
    else names.add(p.name.toLowerCase());
    if (!PARAMETER_TYPES.includes(p.type as ParameterType)) problems.push([[i, 'type'], `type must be one of ${PARAMETER_TYPES.join(', ')}`]);
    if (p.required !== undefined && typeof p.required !== 'boolean') problems.push([[i, 'required'], 'required must be a boolean']);
    if (p.description !== undefined && (typeof p.description !== 'string' || p.description.length > SCRIPT_LIMITS.parameterDescription)) {
      problems.push([[i, 'description'], `description is a string of at most ${SCRIPT_LIMITS.parameterDescription} characters`]);
    }
    if (p.default !== undefined) {
      // A secret's default would be stored in clear beside the script; a required parameter's default would never apply.
      if (p.type === 'secret') problems.push([[i, 'default'], 'a secret parameter cannot have a default']);
      else if (p.required === true) problems.push([[i, 'default'], 'a required parameter cannot have a default']);
      else if (p.type === 'number' && !(typeof p.default === 'number' && Number.isFinite(p.default))) problems.push([[i, 'default'], 'default must be a number']);
      else if (p.type === 'boolean' && typeof p.default !== 'boolean') problems.push([[i, 'default'], 'default must be a boolean']);
      else if (p.type === 'string' && !(typeof p.default === 'string' && p.default.length <= SCRIPT_LIMITS.stringDefault)) {
        problems.push([[i, 'default'], `default must be a string of at most ${SCRIPT_LIMITS.stringDefault} characters`]);
      }
    }
  });
  return problems;
}

/**
 * Problems of an exit-code severity mapping; paths relative to the list. Each entry maps one
 * exitCode or an inclusive from..to range; entries may not overlap, so every code has at
 * most one severity.
 */
export function mappingProblems(list: unknown): Problem[] {
  if (!Array.isArray(list)) return [[[], 'exitCodeSeverityMapping must be an array']];
  const problems: Problem[] = [];
  if (list.length > SCRIPT_LIMITS.mappings) problems.push([[], `at most ${SCRIPT_LIMITS.mappings} entries`]);
  const ranges: { from: number; to: number; index: number }[] = [];
  list.forEach((e, i) => {
    if (!isObject(e)) return problems.push([[i], 'an entry is an object']);
    problems.push(...unknownKeys(e, ['exitCode', 'from', 'to', 'severity'], [i]));
    if (!SEVERITIES.includes(e.severity as Severity)) problems.push([[i, 'severity'], `severity must be one of ${SEVERITIES.join(', ')}`]);
    const single = e.exitCode !== undefined;
    const range = e.from !== undefined || e.to !== undefined;
    if (single === range) return problems.push([[i], 'an entry has either exitCode or both from and to']);
    const bounds = single ? [['exitCode', e.exitCode]] : [['from', e.from], ['to', e.to]];
    const bad = bounds.find(([, v]) => !isExitCode(v));
    if (bad) return problems.push([[i, bad[0] as string], `${bad[0]} must be an integer from ${EXIT_CODE_MIN} to ${EXIT_CODE_MAX}`]);
    const from = (single ? e.exitCode : e.from) as number;
    const to = (single ? e.exitCode : e.to) as number;
    if (from > to) return problems.push([[i, 'from'], 'from must not exceed to']);
    const clash = ranges.find((r) => from <= r.to && r.from <= to);
    if (clash) problems.push([[i], `exit codes ${from}..${to} overlap entry ${clash.index}`]);
    ranges.push({ from, to, index: i });
  });
  return problems;
}

/** Severity of an exit code: the mapped one, else success for 0 and error for anything else. */
export function severityFor(mapping: readonly ExitCodeSeverity[], code: number): Severity {
  const hit = mapping.find((m) => (m.exitCode !== undefined ? m.exitCode === code : (m.from as number) <= code && code <= (m.to as number)));
  return hit?.severity ?? (code === 0 ? 'success' : 'error');
}

/** Entries in a canonical form (only the keys that apply), so stored mappings compare by content. */
export function canonicalMapping(list: readonly ExitCodeSeverity[]): ExitCodeSeverity[] {
  return list.map((e) => (e.exitCode !== undefined ? { exitCode: e.exitCode, severity: e.severity } : { from: e.from, to: e.to, severity: e.severity }));
}

export function canonicalParameters(list: readonly ScriptParameter[]): ScriptParameter[] {
  return list.map((p) => ({
    name: p.name,
    type: p.type,
    required: p.required ?? false,
    ...(p.default !== undefined ? { default: p.default } : {}),
    ...(p.description !== undefined ? { description: p.description } : {}),
  }));
}
