import type { Path, Problem } from '../../../common/shape/path.util';
import type { PolicyFeature } from './policy-feature.types';

export const SOFTWARE_MODES = ['allowlist', 'blocklist', 'audit'] as const;
export type SoftwareMode = (typeof SOFTWARE_MODES)[number];

/** One executable of a software policy; every field it sets must match (spec P1.3, the software-policy bridge). */
export interface SoftwareEntry {
  name?: string;
  sha256?: string;
  signer?: string;
  pathGlob?: string;
}

export interface SoftwareSettings {
  mode: SoftwareMode;
  entries: SoftwareEntry[];
}

export interface PamSettings {
  uacInterceptionEnabled?: boolean;
}

export const SOFTWARE_ENTRY_FIELDS = ['name', 'sha256', 'signer', 'pathGlob'] as const;
export const SOFTWARE_ENTRIES_MAX = 1000;

function entryRules(entry: SoftwareEntry, path: Path): Problem[] {
  // An entry with no criterion would match every executable: a blocklist of it denies all, an allowlist approves all.
  return SOFTWARE_ENTRY_FIELDS.some((f) => entry[f] !== undefined) ? [] : [[path, `an entry needs at least one of: ${SOFTWARE_ENTRY_FIELDS.join(', ')}`]];
}

/**
 * Whether devices capture elevation prompts (spec P2.5). Resolved closest-wins through the
 * assignment hierarchy; true when no assigned policy sets it. It governs capture only, never
 * the rules, the request queue or the audit history.
 */
export const PAM_FEATURE: PolicyFeature = {
  name: 'pam',
  types: ['configuration'],
  description: 'Privileged access: whether the agent intercepts elevation (UAC) prompts.',
  shape: {
    type: 'object',
    properties: {
      uacInterceptionEnabled: { type: 'boolean', description: 'Default true at every level.' },
    },
  },
};

/**
 * Executables a policy allows, blocks or watches, read by the software-policy bridge at the head
 * of the PAM decision chain. Unlike other settings, the software lists of every policy assigned
 * to a device apply together: a blocklist hit anywhere beats an allowlist hit anywhere.
 */
export const SOFTWARE_FEATURE: PolicyFeature = {
  name: 'software',
  types: ['configuration'],
  description: 'Software policy: executables allowed (elevation auto-approved), blocked (denied) or audited (evidence attached).',
  shape: {
    type: 'object',
    required: ['mode', 'entries'],
    properties: {
      mode: { type: 'string', enum: SOFTWARE_MODES },
      entries: {
        type: 'array',
        maxItems: SOFTWARE_ENTRIES_MAX,
        items: {
          type: 'object',
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 255, description: 'File name of the executable, case-insensitive (e.g. setup.exe).' },
            sha256: { type: 'string', pattern: /^[0-9a-fA-F]{64}$/, description: 'SHA-256 of the file, 64 hex characters, case-insensitive.' },
            signer: { type: 'string', minLength: 1, maxLength: 255, description: 'Code signer, exact and case-insensitive.' },
            pathGlob: {
              type: 'string',
              minLength: 1,
              maxLength: 1024,
              description: 'Glob on the full path: case-insensitive, \\ and / alike, * within a segment, ** across segments, ? one character.',
            },
          },
          check: entryRules,
        },
      },
    },
  },
};
