import { asciiLower } from '../rules/engine/text.util';

export const MAX_SIGNERS = 500;
export const MAX_SIGNER_LENGTH = 255;

/**
 * The stored form of a signer list (spec P2.3): entries trimmed, blank ones dropped, and
 * duplicates removed ignoring case, keeping the first spelling. Case is folded the way
 * the rule engine folds it (ASCII letters only), so two entries the engine would tell
 * apart are both kept.
 */
export function normaliseSigners(signers: readonly string[]): string[] {
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const entry of signers) {
    const signer = entry.trim();
    if (signer === '') continue;
    const key = asciiLower(signer);
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(signer);
  }
  return kept;
}
