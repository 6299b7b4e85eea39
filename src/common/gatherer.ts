interface Waiting<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

export interface GathererOptions {
  /** Inputs sent in one call at most. */
  perCall: number;
  /** Calls on their way at once at most; what arrives meanwhile waits and goes with the next. */
  inFlight: number;
}

/**
 * Many small lookups sent as few calls, the way a database groups commits: what arrives in one turn
 * of the event loop goes as one call (of at most `perCall` inputs), and while `inFlight` calls are on
 * their way, what arrives waits and goes together with the next one, as soon as one of them is back.
 * With little traffic a lookup leaves at the end of the turn it arrived in, alone, as it would have
 * without the gatherer; under a storm of them (a fleet reconnecting after a deploy) each call carries
 * everything that arrived while the last was answered, so their number stays near the number of
 * round trips the database can answer, whatever the rate.
 *
 * `send` answers each input at the same position of its result; a call that fails fails each of its
 * inputs with its error, and the next call is sent as usual.
 */
export class Gatherer<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private sending = 0;
  private scheduled = false;

  constructor(
    private readonly send: (inputs: I[]) => Promise<O[]>,
    private readonly options: GathererOptions,
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      this.schedule();
    });
  }

  /** Inputs waiting for a call, and calls on their way (for tests and metrics). */
  get pending(): { waiting: number; sending: number } {
    return { waiting: this.waiting.length, sending: this.sending };
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0 || this.sending >= this.options.inFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.waiting.length > 0 && this.sending < this.options.inFlight) {
      const batch = this.waiting.splice(0, this.options.perCall);
      this.sending++;
      let sent: Promise<O[]>;
      try {
        sent = this.send(batch.map((w) => w.input));
      } catch (error) {
        sent = Promise.reject(error);
      }
      sent
        .then(
          (outputs) => batch.forEach((w, n) => w.resolve(outputs[n])),
          (error: unknown) => batch.forEach((w) => w.reject(error)),
        )
        .finally(() => {
          this.sending--;
          this.schedule();
        });
    }
  }
}
