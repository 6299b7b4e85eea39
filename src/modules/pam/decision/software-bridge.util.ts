import type { SoftwareEntry, SoftwareMode } from '../../policies/features/pam.features';
import { compileGlobPattern, matchGlobSegments, toGlobSegments, type GlobPattern } from '../rules/engine/glob.util';
import { asciiLower } from '../rules/engine/text.util';
import type { AppliedSoftwarePolicy, DecisionPolicy, SoftwareEvidence } from './decision.types';

/**
 * The software-policy bridge, the first link of the decision chain (spec P1.3): the software
 * lists of the configuration policies reaching a device, matched against the executable a
 * consent prompt is about.
 *
 * Every software policy reaching the device applies, not only the closest: a blocklist hit in
 * any of them denies, even when another (closer or not) allowlists the executable; otherwise an
 * allowlist hit auto-approves; audit hits never decide, they attach evidence. Among policies of
 * the deciding kind, the closest one is reported.
 *
 * An entry matches when every criterion it sets holds: the file name (last path segment) and
 * the signer exactly, the SHA-256 exactly, the path by the rules' glob (docs/pam-rules.md, "Matching"), all
 * ignoring ASCII case. A criterion on a value the request lacks never holds.
 */

export class SoftwarePolicyError extends Error {
  constructor(policyId: string, reason: string) {
    super(`software policy ${policyId} cannot be evaluated: ${reason}`);
    this.name = 'SoftwarePolicyError';
  }
}

interface CompiledEntry {
  readonly index: number;
  readonly entry: SoftwareEntry;
  readonly name: string | null;
  readonly sha256: string | null;
  readonly signer: string | null;
  readonly pathGlob: GlobPattern | null;
}

export interface CompiledSoftwarePolicy {
  readonly policy: DecisionPolicy;
  readonly entries: readonly CompiledEntry[];
}

export interface Executable {
  path?: string | null;
  hash?: string | null;
  signer?: string | null;
}

export interface BridgeResult {
  /** deny: a blocklist hit; allow: an allowlist hit and no blocklist hit; null: the bridge does not decide. */
  verdict: 'deny' | 'allow' | null;
  /** The deciding policy, else the closest audit policy that matched. */
  policy: DecisionPolicy | null;
  evidence: SoftwareEvidence[];
}

const MODES: readonly SoftwareMode[] = ['allowlist', 'blocklist', 'audit'];

function text(value: unknown, policyId: string, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value === '') throw new SoftwarePolicyError(policyId, `${field} is not a non-empty string`);
  return asciiLower(value);
}

/**
 * Settings come from a jsonb column the API validates on write; anything else (a row written
 * around the API) is refused here rather than read as an empty, permissive list.
 */
export function compileSoftwarePolicy(applied: AppliedSoftwarePolicy): CompiledSoftwarePolicy {
  const id = applied.policyId;
  const settings = applied.settings as unknown;
  if (!settings || typeof settings !== 'object' || Array.isArray(settings)) throw new SoftwarePolicyError(id, 'settings are not an object');
  const { mode, entries } = settings as { mode?: unknown; entries?: unknown };
  if (!MODES.includes(mode as SoftwareMode)) throw new SoftwarePolicyError(id, `unknown mode ${String(mode)}`);
  if (!Array.isArray(entries)) throw new SoftwarePolicyError(id, 'entries is not an array');
  const compiled = entries.map((raw: unknown, index): CompiledEntry => {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new SoftwarePolicyError(id, `entry ${index} is not an object`);
    const entry = raw as SoftwareEntry;
    const glob = text(entry.pathGlob, id, `entry ${index} pathGlob`);
    const result: CompiledEntry = {
      index,
      entry,
      name: text(entry.name, id, `entry ${index} name`),
      sha256: text(entry.sha256, id, `entry ${index} sha256`),
      signer: text(entry.signer, id, `entry ${index} signer`),
      pathGlob: glob === null ? null : compileGlobPattern(glob),
    };
    if (!result.name && !result.sha256 && !result.signer && !result.pathGlob) throw new SoftwarePolicyError(id, `entry ${index} has no criterion`);
    return result;
  });
  return { policy: { id, name: applied.policyName, mode: mode as SoftwareMode }, entries: compiled };
}

interface PreparedExecutable {
  name: string | null;
  hash: string | null;
  signer: string | null;
  segments: string[] | null;
}

function prepare(exe: Executable): PreparedExecutable {
  const segments = exe.path ? toGlobSegments(exe.path) : null;
  const last = segments ? segments[segments.length - 1] : '';
  return {
    name: last ? last : null,
    hash: exe.hash ? asciiLower(exe.hash) : null,
    signer: exe.signer ? asciiLower(exe.signer) : null,
    segments,
  };
}

function entryMatches(e: CompiledEntry, x: PreparedExecutable): boolean {
  if (e.sha256 !== null && e.sha256 !== x.hash) return false;
  if (e.name !== null && e.name !== x.name) return false;
  if (e.signer !== null && e.signer !== x.signer) return false;
  if (e.pathGlob !== null && (x.segments === null || !matchGlobSegments(e.pathGlob, x.segments))) return false;
  return true;
}

/** `policies` closest first, as resolved for the device. */
export function runBridge(policies: readonly CompiledSoftwarePolicy[], exe: Executable): BridgeResult {
  const x = prepare(exe);
  let blocked: DecisionPolicy | null = null;
  let allowed: DecisionPolicy | null = null;
  let audited: DecisionPolicy | null = null;
  const evidence: SoftwareEvidence[] = [];
  for (const p of policies) {
    const mode = p.policy.mode;
    if ((mode === 'blocklist' && blocked) || (mode === 'allowlist' && allowed)) continue;
    for (const e of p.entries) {
      if (!entryMatches(e, x)) continue;
      if (mode === 'blocklist') blocked = p.policy;
      else if (mode === 'allowlist') allowed = p.policy;
      else {
        audited ??= p.policy;
        evidence.push({ policyId: p.policy.id, policyName: p.policy.name, mode, entryIndex: e.index, entry: e.entry });
      }
      if (mode !== 'audit') break;
    }
  }
  if (blocked) return { verdict: 'deny', policy: blocked, evidence };
  if (allowed) return { verdict: 'allow', policy: allowed, evidence };
  return { verdict: null, policy: audited, evidence };
}
