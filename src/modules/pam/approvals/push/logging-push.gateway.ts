import { Logger } from '@nestjs/common';
import { PushGateway, PushMessage, PushResult } from './push-gateway';

/** Without PUSH_GATEWAY_URL, pushes are logged (never the token) and count as delivered. */
export class LoggingPushGateway extends PushGateway {
  private readonly logger = new Logger('PushGateway');

  send(message: PushMessage): Promise<PushResult> {
    this.logger.log({ platform: message.platform, title: message.title, data: message.data }, 'PUSH_GATEWAY_URL is not set: push logged, not sent');
    return Promise.resolve({ ok: true });
  }
}
