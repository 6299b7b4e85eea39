import { asciiLower } from './text.util';

/**
 * The tools an AI helper can call on a device and the risk tier each call resolves to.
 * The tier of an ai_tool_action request comes from here, never from the caller
 * (docs/pam-rules.md), and rules pin tiers by exact equality, so changing an entry can leave
 * stored rules unable to match: `findTierDrift` reports them at start-up and in lists.
 *
 * Tiers:
 *   0  read-only inspection: nothing on the device changes.
 *   1  transient or user-visible effects that undo themselves: no lasting state.
 *   2  interrupts running work (processes, services) or deletes disposable data; the
 *      device returns to its previous state by restarting what was stopped.
 *   3  lasting change to the system (software, files, a reboot that ends every
 *      session), or arbitrary code with the logged-on user's rights.
 *   4  can change the device's security boundary: arbitrary code as SYSTEM, the
 *      registry, local accounts and group membership.
 */

export const RISK_TIERS = [0, 1, 2, 3, 4] as const;
export type RiskTier = (typeof RISK_TIERS)[number];

export interface ToolTierEntry {
  readonly toolName: string;
  /** Tier when the call names no action, or one this entry does not list. */
  readonly defaultTier: RiskTier;
  /** Tier by action name (lower case), for tools whose actions differ in reach. */
  readonly actions: Readonly<Record<string, RiskTier>>;
  readonly why: string;
}

function tool(
  toolName: string,
  defaultTier: RiskTier,
  why: string,
  actions: Record<string, RiskTier> = {},
): ToolTierEntry {
  return { toolName, defaultTier, actions, why };
}

export const TOOL_TIER_REGISTRY: readonly ToolTierEntry[] = [
  tool('read_file', 0, 'Returns file content; changes nothing.'),
  tool('list_processes', 0, 'Enumerates running processes; changes nothing.'),
  tool('get_system_info', 0, 'Reads OS, hardware and patch inventory; changes nothing.'),
  tool('query_event_log', 0, 'Reads event log entries; changes nothing.'),
  tool('flush_dns_cache', 1, 'Empties a cache the resolver refills on demand; no lasting state.'),
  tool('send_user_message', 1, 'Shows a message to the logged-on user; visible but changes nothing.'),
  tool('kill_process', 2, 'Ends a process and can lose its unsaved work; nothing persists past a restart of it.'),
  tool('restart_service', 2, 'Interrupts a service; it comes back in its previous configuration.'),
  tool('clear_temp_files', 2, 'Deletes files from temporary folders only; irreversible but disposable data.'),
  tool('install_software', 3, 'Adds code that persists and may run at boot.'),
  tool('uninstall_software', 3, 'Removes installed software; undoing it needs a reinstall.'),
  tool('write_file', 3, 'Creates or overwrites a file; lasting change to data or configuration.'),
  tool('reboot_device', 3, 'Ends every session on the device; an outage for its users.'),
  tool(
    'run_script',
    4,
    'Runs arbitrary code: as the logged-on user it can change anything that user can (3); ' +
      'elevated or as SYSTEM it can change anything (4). An unstated context is treated as elevated.',
    { user: 3, elevated: 4, system: 4 },
  ),
  tool('edit_registry', 4, 'Registry writes can disable security controls and add persistence.'),
  tool(
    'manage_local_user',
    4,
    'Listing accounts reads only (0); creating accounts, resetting passwords or changing ' +
      'group membership moves the security boundary (4).',
    { list: 0, create: 4, reset_password: 4, add_to_group: 4, remove_from_group: 4, disable: 4 },
  ),
];

const BY_NAME: ReadonlyMap<string, ToolTierEntry> = new Map(
  TOOL_TIER_REGISTRY.map((entry) => [entry.toolName, entry]),
);

function entryFor(toolName: string): ToolTierEntry | undefined {
  return BY_NAME.get(asciiLower(toolName.trim()));
}

function tiersOf(entry: ToolTierEntry): number[] {
  return [...new Set<number>([entry.defaultTier, ...Object.values(entry.actions)])].sort((a, b) => a - b);
}

export function isKnownTool(toolName: string): boolean {
  return entryFor(toolName) !== undefined;
}

/**
 * The tier a call resolves to; null for a tool the registry does not know. A missing
 * action, or one the entry does not list, gets the entry's default, which every entry
 * sets to its highest tier so that an unexpected action is never under-classified.
 */
export function resolveTier(toolName: string, action?: string | null): number | null {
  const entry = entryFor(toolName);
  if (!entry) return null;
  if (action === undefined || action === null) return entry.defaultTier;
  return entry.actions[asciiLower(action.trim())] ?? entry.defaultTier;
}

/** Every tier calls of this tool can resolve to, ascending; null for an unknown tool. */
export function reachableTiers(toolName: string): number[] | null {
  const entry = entryFor(toolName);
  return entry ? tiersOf(entry) : null;
}

/** Every tier some known tool can resolve to, ascending. */
export function allReachableTiers(): number[] {
  return [...new Set(TOOL_TIER_REGISTRY.flatMap(tiersOf))].sort((a, b) => a - b);
}

/**
 * Tiers reachable through a rule's tool selector: the named tool's tiers, the union
 * over every other tool when the name is negated, the union over all tools when the
 * rule names none, and null (cannot tell) for a tool the registry does not know.
 */
export function tiersForToolSelector(toolName: string | null | undefined, negated = false): number[] | null {
  const name = toolName?.trim() ?? '';
  if (name === '') return allReachableTiers();
  const entry = entryFor(name);
  if (!entry) return null;
  if (!negated) return tiersOf(entry);
  const others = TOOL_TIER_REGISTRY.filter((candidate) => candidate !== entry).flatMap(tiersOf);
  return [...new Set(others)].sort((a, b) => a - b);
}

export interface TierDriftCandidate {
  enabled: boolean;
  matchToolName?: string | null;
  matchRiskTier?: number | null;
  matchNegate?: readonly string[] | null;
}

export interface RiskTierStatus {
  /** True when the rule pins a tier its tool selector can no longer resolve to. */
  readonly stale: boolean;
  /** Tiers the selector can resolve to; null when the rule pins no tier or names an unknown tool. */
  readonly validTiers: number[] | null;
}

/**
 * For list rows (`matchRiskTierStale`, `matchRiskTierValidTiers`). A negated tier
 * only narrows what the rule matches, so it is never stale.
 */
export function riskTierStatus(rule: Omit<TierDriftCandidate, 'enabled'>): RiskTierStatus {
  const tier = rule.matchRiskTier;
  if (tier === null || tier === undefined) return { stale: false, validTiers: null };
  const negate = rule.matchNegate ?? [];
  const validTiers = tiersForToolSelector(rule.matchToolName, negate.includes('toolName'));
  if (validTiers === null) return { stale: false, validTiers: null };
  return { stale: !negate.includes('riskTier') && !validTiers.includes(tier), validTiers };
}

export interface TierDriftFinding<R> {
  readonly rule: R;
  readonly validTiers: number[];
}

/** Enabled rules pinned to a tier their tool selector cannot resolve to (spec P4.2, drift). */
export function findTierDrift<R extends TierDriftCandidate>(rules: readonly R[]): TierDriftFinding<R>[] {
  const findings: TierDriftFinding<R>[] = [];
  for (const rule of rules) {
    if (!rule.enabled) continue;
    const status = riskTierStatus(rule);
    if (status.stale) findings.push({ rule, validTiers: status.validTiers! });
  }
  return findings;
}
