import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { Verp } from '../delivery/verp.js';
import { readDeliveryReport } from './delivery-reports.js';
import { DeliveryReportsService } from './delivery-reports.service.js';

/** The largest report accepted (a DSN or ARF report quotes at most the original's headers or a copy). */
export const MAX_REPORT_BYTES = 1024 * 1024;

type Rejection = Error & { responseCode: number };
const reject = (code: number, message: string): Rejection => Object.assign(new Error(message), { responseCode: code });

/**
 * The mail worker's inbound SMTP listener for bounce and complaint reports (decisions.md
 * "Deliverability"), on MAIL_INBOUND_SMTP_PORT when MAIL_BOUNCE_DOMAIN is set. It accepts mail only
 * for VERP addresses whose token verifies (550 at RCPT otherwise: forged, guessed or another domain),
 * at most 1 MB (552 beyond), no AUTH or STARTTLS (a receiving MX, like any other). A report that
 * cannot be recorded right now is answered 451, so the sending MTA retries it.
 */
@Injectable()
export class InboundSmtpService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(InboundSmtpService.name);
  private server: SMTPServer | null = null;
  private listeningPort: number | null = null;

  constructor(
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
    private readonly verp: Verp,
    private readonly reports: DeliveryReportsService,
  ) {}

  /** Where it listens (null: not listening, MAIL_BOUNCE_DOMAIN unset). */
  get port(): number | null {
    return this.listeningPort;
  }

  async onApplicationBootstrap(): Promise<void> {
    const domain = this.config.deliverability.bounceDomain;
    if (!domain) return;
    const server = new SMTPServer({
      name: domain,
      banner: 'bounce and complaint reports',
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      size: MAX_REPORT_BYTES,
      logger: false,
      closeTimeout: 5000,
      onRcptTo: (address, session, callback) => this.onRcptTo(address, session, callback),
      onData: (stream, session, callback) => this.onData(stream, session, callback),
    });
    server.on('error', (err: Error) => this.logger.warn({ err: err.message }, 'inbound SMTP connection error'));
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(this.config.deliverability.inboundSmtpPort, () => resolve());
    });
    this.server = server;
    this.listeningPort = (server.server.address() as AddressInfo).port;
    this.logger.log(
      { port: this.listeningPort, bounceDomain: domain },
      `inbound SMTP listener for bounce and complaint reports on port ${this.listeningPort} (mail for bounces+<token>@${domain})`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void): void {
    if (this.verp.emailIdOf(address.address) === null) return callback(reject(550, '5.1.1 no such bounce address'));
    callback();
  }

  private onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void): void {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REPORT_BYTES) chunks.push(chunk);
    });
    stream.on('end', () => {
      if (stream.sizeExceeded || size > MAX_REPORT_BYTES)
        return callback(reject(552, `5.3.4 reports are limited to ${MAX_REPORT_BYTES} bytes`));
      const emailIds = session.envelope.rcptTo.map((r) => this.verp.emailIdOf(r.address)).filter((id): id is string => id !== null);
      this.process(Buffer.concat(chunks), emailIds).then(
        () => callback(null, 'report received'),
        (err: Error) => {
          this.logger.error({ err: err.message }, 'recording a delivery report failed; the sender will retry');
          callback(reject(451, '4.3.0 try again later'));
        },
      );
    });
  }

  private async process(raw: Buffer, emailIds: string[]): Promise<void> {
    const report = await readDeliveryReport(raw);
    if (report.kind === 'ignored') this.logger.log({ why: report.why }, 'delivery report changes nothing');
    for (const emailId of new Set(emailIds)) await this.reports.apply(emailId, report);
  }
}
