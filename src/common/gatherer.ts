interface Waiting<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Many small lookups sent as few calls: what arrives in one turn of the event loop (every request
 * the loop read from its sockets in that turn, and what their continuations asked for) goes at the
 * end of the turn, as one call per `perCall` inputs. With little traffic a lookup leaves at the end
 * of the turn it arrived in, alone, as it would have without the gatherer; in a storm of them (a
 * fleet reconnecting after a deploy) a call carries everything that arrived in its turn.
 *
 * Measured on the reconnect storm (docs/pam-lifecycle.md): holding what arrives while earlier calls
 * are still on their way, as a database groups commits, did no better and sometimes far worse. When
 * the event loop itself is the bottleneck, a call's answer waits in its socket for the loop, and
 * lookups held behind it starve.
 *
 * `send` answers each input at the same position of its result; a call that fails fails each of its
 * inputs with its error, and the next turn's call is sent as usual.
 */
export class Gatherer<I, O> {
  private waiting: Waiting<I, O>[] = [];

  constructor(
    private readonly send: (inputs: I[]) => Promise<O[]>,
    private readonly perCall: number,
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (this.waiting.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (let i = 0; i < waiting.length; i += this.perCall) {
      const batch = waiting.slice(i, i + this.perCall);
      let sent: Promise<O[]>;
      try {
        sent = this.send(batch.map((w) => w.input));
      } catch (error) {
        sent = Promise.reject(error);
      }
      sent.then(
        (outputs) => batch.forEach((w, n) => w.resolve(outputs[n])),
        (error: unknown) => batch.forEach((w) => w.reject(error)),
      );
    }
  }
}
