import { HostResolver, ResolvedAddress } from '../../../src/infra/net/resolver.types';

/**
 * A HostResolver answering from a script and recording every call. Each call for a
 * name takes the next queued answer, the last one repeating; unknown names fail with
 * ENOTFOUND as the system resolver does.
 */
export class ScriptedResolver implements HostResolver {
  readonly calls: string[] = [];
  private readonly answers = new Map<string, ResolvedAddress[][]>();

  answer(host: string, ...answers: string[][]): this {
    this.answers.set(
      host,
      answers.map((addresses) =>
        addresses.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
      ),
    );
    return this;
  }

  async resolve(host: string): Promise<ResolvedAddress[]> {
    this.calls.push(host);
    const queue = this.answers.get(host);
    if (!queue || queue.length === 0) {
      throw Object.assign(new Error(`no answer for ${host}`), { code: 'ENOTFOUND' });
    }
    return queue.length > 1 ? (queue.shift() as ResolvedAddress[]) : queue[0];
  }
}
