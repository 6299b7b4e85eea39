export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it may be reached at (A and AAAA). */
export interface HostResolver {
  resolve(host: string): Promise<ResolvedAddress[]>;
}

/** Resolves TXT records: one inner array per record, holding its character-strings in order. */
export interface TxtResolver {
  resolveTxt(name: string): Promise<string[][]>;
}
