import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { PushGateway, PushMessage, PushResult } from './push-gateway';

export const PUSH_TIMEOUT_MS = 5000;

/**
 * Posts each message as JSON to PUSH_GATEWAY_URL (a relay in front of APNs and FCM). 2xx is
 * delivered; 408, 429 and 5xx, timeouts and network errors are worth retrying; any other status
 * means the gateway refused the message for good (for example an unregistered token). Errors never
 * carry the token or the response body.
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

  send(message: PushMessage): Promise<PushResult> {
    const payload = Buffer.from(JSON.stringify(message), 'utf8');
    const send = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<PushResult>((resolve) => {
      const req = send(
        this.url,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': payload.length }, timeout: this.timeoutMs },
        (res) => {
          res.resume();
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) return resolve({ ok: true });
            resolve({ ok: false, retryable: status === 408 || status === 429 || status >= 500, error: `Push gateway answered HTTP ${status}` });
          });
          res.on('error', () => resolve({ ok: false, retryable: true, error: 'Push gateway response was interrupted' }));
        },
      );
      // `timeout` bounds silence on the socket; this bounds the whole exchange, so a gateway that answers slowly, byte by byte, cannot hold a send longer.
      const deadline = setTimeout(() => req.destroy(new Error('timeout')), this.timeoutMs);
      req.on('close', () => clearTimeout(deadline));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err: NodeJS.ErrnoException) =>
        resolve({ ok: false, retryable: true, error: err.message === 'timeout' ? `Push gateway did not answer within ${this.timeoutMs} ms` : `Push gateway unreachable (${err.code ?? 'network error'})` }),
      );
      req.end(payload);
    });
  }
}
