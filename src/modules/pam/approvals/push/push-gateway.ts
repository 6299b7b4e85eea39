/** One notification to one phone. */
export interface PushMessage {
  platform: 'ios' | 'android';
  token: string;
  title: string;
  body: string;
  /** Identifiers the app needs to open the approval; no secrets. */
  data: Record<string, string>;
}

export type PushResult = { ok: true } | { ok: false; retryable: boolean; error: string };

/**
 * Where mobile approval pushes go. An abstract class so that it can be the injection token:
 * the HTTP gateway when PUSH_GATEWAY_URL is set, else the logging one.
 */
export abstract class PushGateway {
  abstract send(message: PushMessage): Promise<PushResult>;
}
