import { Inject, Injectable, Logger } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';

/** Outbound mail over SMTP (SMTP_URL). Without it, mail is logged (minus its secrets) and dropped. */
@Injectable()
export class MailService {
  private readonly logger = new Logger(MailService.name);
  private readonly transport: Transporter | null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.transport = config.smtpUrl ? createTransport(config.smtpUrl) : null;
  }

  async send(to: string, subject: string, text: string): Promise<void> {
    if (!this.transport) {
      this.logger.warn(`SMTP_URL is not set: not sending "${subject}"`);
      return;
    }
    await this.transport.sendMail({ from: this.config.mailFrom, to, subject, text });
  }
}
