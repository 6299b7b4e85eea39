import { PushGateway, PushMessage, PushResult } from './push-gateway';

export const PUSH_TIMEOUT_MS = 5000;

/**
 * Posts each message as JSON to PUSH_GATEWAY_URL (a relay in front of APNs and FCM) with the
 * runtime's fetch: the URL is the operator's configuration, not a tenant's input, so it needs
 * none of safe-fetch's address checks and pinning (src/infra/net). 2xx is delivered; 408, 429
 * and 5xx, timeouts and network errors are worth retrying; any other status means the gateway
 * refused the message for good (for example an unregistered token). Errors never carry the token
 * or the response body.
 */
export class HttpPushGateway extends PushGateway {
  private readonly url: URL;

  constructor(
    url: string,
    private readonly timeoutMs = PUSH_TIMEOUT_MS,
  ) {
    super();
    this.url = new URL(url);
  }

  async send(message: PushMessage): Promise<PushResult> {
    let status: number | undefined;
    try {
      // The signal bounds the whole exchange, reading the answer included, so a gateway that answers slowly, byte by byte, cannot hold a send longer.
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(message),
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      await res.arrayBuffer();
    } catch (error) {
      return { ok: false, retryable: true, error: failureOf(error, status, this.timeoutMs) };
    }
    if (status >= 200 && status < 300) return { ok: true };
    return { ok: false, retryable: status === 408 || status === 429 || status >= 500, error: `Push gateway answered HTTP ${status}` };
  }
}

/** What went wrong, in words safe to store: never the token, the URL or the body. */
function failureOf(error: unknown, status: number | undefined, timeoutMs: number): string {
  const e = error as Error & { cause?: { code?: string } };
  if (e.name === 'TimeoutError') return `Push gateway did not answer within ${timeoutMs} ms`;
  if (status !== undefined) return 'Push gateway response was interrupted';
  return `Push gateway unreachable (${e.cause?.code ?? 'network error'})`;
}
