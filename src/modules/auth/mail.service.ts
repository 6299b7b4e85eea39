import { Inject, Injectable, Logger } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';

/**
 * Bounds on one SMTP delivery (nodemailer waits minutes by default): opening the connection, the
 * server's greeting, and any silence on the socket after that. A server that is down or stalls
 * fails the send within these, instead of holding the after-response task (and a stop's drain).
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 5000, greetingTimeout: 5000, socketTimeout: 10_000 } as const;

/** Outbound mail over SMTP (SMTP_URL). Without it, mail is logged (minus its secrets) and dropped. */
@Injectable()
export class MailService {
  private readonly logger = new Logger(MailService.name);
  private readonly transport: Transporter | null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.transport = config.smtpUrl ? createTransport({ url: config.smtpUrl, ...SMTP_TIMEOUTS }) : null;
  }

  async send(to: string, subject: string, text: string): Promise<void> {
    if (!this.transport) {
      this.logger.warn(`SMTP_URL is not set: not sending "${subject}"`);
      return;
    }
    await this.transport.sendMail({ from: this.config.mailFrom, to, subject, text });
  }
}
