import DNS from 'dns2';

const { Packet } = DNS;

/** RFC 1035 §4.1.1 response codes (dns2 has them at runtime but not in its typings). */
const RCODE = { FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3 } as const;

interface ZoneEntry {
  a: string[];
  aaaa: string[];
  txt: string[][];
  slowMs: number;
  servfail: boolean;
}

export interface DnsQuery {
  name: string;
  type: 'A' | 'AAAA' | 'TXT' | 'OTHER';
}

/**
 * A real DNS server on 127.0.0.1 (UDP, random free port) answering from an in-memory
 * zone the test edits while it runs. Names are case-insensitive and absolute (a
 * trailing dot is ignored). Unknown names answer NXDOMAIN; known names without records
 * of the asked type answer NOERROR with no data (NODATA). Answers carry TTL 0 so that
 * no resolver-side cache hides a zone change between two queries.
 */
export class TestDnsServer {
  private readonly zone = new Map<string, ZoneEntry>();
  private readonly pending = new Set<NodeJS.Timeout>();
  private readonly log: DnsQuery[] = [];
  private server: DNS.DnsServer | null = null;
  private boundPort = 0;

  get port(): number {
    if (!this.server) throw new Error('TestDnsServer is not started');
    return this.boundPort;
  }

  /** The server as one DNS_SERVERS entry. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Every query received so far, in arrival order. */
  get queries(): readonly DnsQuery[] {
    return this.log;
  }

  queryCount(name: string, type?: DnsQuery['type']): number {
    const key = normalise(name);
    return this.log.filter((q) => q.name === key && (type === undefined || q.type === type)).length;
  }

  setA(name: string, ip: string | string[]): this {
    this.entry(name).a = ([] as string[]).concat(ip);
    return this;
  }

  setAAAA(name: string, ip: string | string[]): this {
    this.entry(name).aaaa = ([] as string[]).concat(ip);
    return this;
  }

  /** Each inner array is one TXT record; its items are that record's character-strings. */
  setTxt(name: string, records: string[][]): this {
    for (const record of records) {
      for (const piece of record) {
        if (Buffer.byteLength(piece) > 255) throw new Error('A TXT character-string holds at most 255 bytes');
      }
    }
    this.entry(name).txt = records.map((record) => [...record]);
    return this;
  }

  /** Answers for `name` are sent only after `ms` milliseconds. */
  setSlow(name: string, ms: number): this {
    this.entry(name).slowMs = ms;
    return this;
  }

  /** Every query for `name` is answered SERVFAIL. */
  setServfail(name: string): this {
    this.entry(name).servfail = true;
    return this;
  }

  remove(name: string): this {
    this.zone.delete(normalise(name));
    return this;
  }

  async start(): Promise<{ port: number }> {
    if (this.server) throw new Error('TestDnsServer is already started');
    const server = DNS.createServer({
      udp: true,
      handle: (request, send) => this.answer(request, send),
    });
    this.server = server;
    const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
    if (!addresses.udp) throw new Error('dns2 did not bind a UDP socket');
    this.boundPort = addresses.udp.port;
    return { port: this.boundPort };
  }

  async stop(): Promise<void> {
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
    const server = this.server;
    this.server = null;
    if (server) await server.close();
  }

  private entry(name: string): ZoneEntry {
    const key = normalise(name);
    let entry = this.zone.get(key);
    if (!entry) {
      entry = { a: [], aaaa: [], txt: [], slowMs: 0, servfail: false };
      this.zone.set(key, entry);
    }
    return entry;
  }

  private answer(request: DNS.Packet, send: (response: DNS.Packet) => Promise<Buffer>): void {
    const response = Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    if (!question) {
      response.header.rcode = RCODE.FORMERR;
      void send(response);
      return;
    }
    const name = normalise(question.name);
    this.log.push({ name, type: typeName(question.type) });

    const entry = this.zone.get(name);
    if (!entry) {
      response.header.rcode = RCODE.NXDOMAIN;
    } else if (entry.servfail) {
      response.header.rcode = RCODE.SERVFAIL;
    } else if (question.type === Packet.TYPE.A) {
      for (const address of entry.a) response.answers.push(resource(question, Packet.TYPE.A, { address }));
    } else if (question.type === Packet.TYPE.AAAA) {
      for (const address of entry.aaaa) response.answers.push(resource(question, Packet.TYPE.AAAA, { address }));
    } else if (question.type === Packet.TYPE.TXT) {
      // dns2 writes an array `data` as several character-strings of one record.
      for (const data of entry.txt) response.answers.push(resource(question, Packet.TYPE.TXT, { data }));
    }

    if (entry && entry.slowMs > 0) {
      const timer = setTimeout(() => {
        this.pending.delete(timer);
        if (this.server) void send(response).catch(() => undefined);
      }, entry.slowMs);
      this.pending.add(timer);
      return;
    }
    void send(response).catch(() => undefined);
  }
}

function normalise(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function typeName(type: number): DnsQuery['type'] {
  if (type === Packet.TYPE.A) return 'A';
  if (type === Packet.TYPE.AAAA) return 'AAAA';
  if (type === Packet.TYPE.TXT) return 'TXT';
  return 'OTHER';
}

function resource(
  question: DNS.Packet.Question,
  type: number,
  fields: Partial<DNS.Packet.Resource>,
): DNS.Packet.Resource {
  return { name: question.name, type, class: Packet.CLASS.IN, ttl: 0, ...fields } as DNS.Packet.Resource;
}
