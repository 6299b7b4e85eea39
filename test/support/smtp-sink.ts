import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SunkMail {
  to: string[];
  subject: string;
  /** The decoded text body (quoted-printable soft breaks and escapes undone). */
  text: string;
}

export interface SmtpSink {
  /** For SMTP_URL. */
  url: string;
  messages: SunkMail[];
  /** Resolves with the first message to `to` that matches, waiting up to timeoutMs. */
  waitFor(to: string, match?: (m: SunkMail) => boolean, timeoutMs?: number): Promise<SunkMail>;
  /** Messages received so far for one address. */
  to(address: string): SunkMail[];
  stop(): Promise<void>;
}

function decodeQuotedPrintable(s: string): string {
  const bytes = s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parse(raw: string, to: string[]): SunkMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable' ? decodeQuotedPrintable(body) : encoding === 'base64' ? Buffer.from(body, 'base64').toString('utf8') : body;
  return { to: to.map((a) => a.toLowerCase()), subject: header('Subject'), text };
}

/**
 * A local SMTP server that accepts every message (no TLS, no auth) and keeps it in memory,
 * for tests that check what the service mails. Plain text bodies only, as the service sends.
 */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: SunkMail[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push(parse(Buffer.concat(chunks).toString('latin1'), session.envelope.rcptTo.map((r) => r.address)));
        waiters.splice(0).forEach((w) => w());
        callback();
      });
    },
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  const { port } = server.server.address() as AddressInfo;
  const to = (address: string) => messages.filter((m) => m.to.includes(address.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to,
    async waitFor(address, match = () => true, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = to(address).find(match);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`No mail for ${address} within ${timeoutMs} ms`);
        await new Promise<void>((res) => {
          const timer = setTimeout(res, left);
          waiters.push(() => {
            clearTimeout(timer);
            res();
          });
        });
      }
    },
    stop: () => new Promise<void>((res) => server.close(() => res())),
  };
}
