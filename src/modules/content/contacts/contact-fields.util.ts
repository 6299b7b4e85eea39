export const PHONE_TYPES = ['work', 'mobile', 'home', 'fax', 'other'] as const;
export type PhoneType = (typeof PHONE_TYPES)[number];

export const CONTACT_LIMITS = { name: 255, email: 255, title: 255, notes: 10_000, externalId: 255, phone: 50, phones: 10 } as const;

export interface ContactPhone {
  type: PhoneType;
  number: string;
}

/** The fields of a contact an import may set, in a canonical form that compares with ===. */
export interface ContactFields {
  name: string;
  email: string | null;
  phones: ContactPhone[];
  title: string | null;
  notes: string | null;
  siteId: string | null;
}

export const CONTACT_FIELD_NAMES = ['name', 'email', 'phones', 'title', 'notes', 'siteId'] as const;

const blankToNull = (v: string | null | undefined): string | null => {
  const t = v?.trim();
  return t ? t : null;
};

export function canonicalContact(c: { name: string; email?: string | null; phones?: ContactPhone[] | null; title?: string | null; notes?: string | null; siteId?: string | null }): ContactFields {
  return {
    name: c.name.trim(),
    email: blankToNull(c.email),
    phones: (c.phones ?? []).map((p) => ({ type: p.type, number: p.number.trim() })),
    title: blankToNull(c.title),
    notes: blankToNull(c.notes),
    siteId: c.siteId ?? null,
  };
}

/** Names of the fields whose values differ. */
export function changedContactFields(a: ContactFields, b: ContactFields): string[] {
  return CONTACT_FIELD_NAMES.filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f]));
}

/** Email as compared for fuzzy matching: trimmed, case-folded. */
export function emailKey(email: string | null | undefined): string | null {
  const t = email?.trim().toLowerCase();
  return t ? t : null;
}

/**
 * Name as compared for fuzzy matching: accents stripped, case-folded, punctuation dropped,
 * words sorted, so "Dupont, Élise" and "elise dupont" meet.
 */
export function nameKey(name: string | null | undefined): string | null {
  if (!name) return null;
  const words = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .sort();
  return words.length ? words.join(' ') : null;
}
