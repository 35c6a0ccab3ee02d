import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared/index.js';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { connectToRelay } from './relay-socket.js';
import { isThrottling, RelayPausedError, RelayThrottle } from './relay-throttle.js';

/** One send's mark, set when the gate held it (nodemailer copies the message's own keys into `mail.data`). */
interface RelayGateTicket {
  held: boolean;
}
/** What nodemailer hands a 'stream' plugin: the compiled message, whose envelope the SMTP pool reads. */
interface CompiledMail {
  message: { getEnvelope(): { from: string | false; to: string[] } };
  data: { relayGate?: RelayGateTicket };
}

export interface SentMessage {
  /** What the provider calls the message: the SMTP server's reply (it names its queue id), or the outbox file. */
  providerMessageId: string;
}

/** A delivery that must not be retried: the server refused the message for good (SMTP 5xx). */
export function isPermanentFailure(err: unknown): boolean {
  const code = (err as { responseCode?: unknown })?.responseCode;
  return typeof code === 'number' && code >= 500;
}

/**
 * The one mail provider of a worker process (decisions.md "mail transport"): MAIL_SMTP_URL set →
 * pooled SMTP through nodemailer (MAIL_SMTP_POOL_SIZE connections reused across messages, so the
 * handshake is paid once per connection, not per email); unset → each message is written as
 * `<MAIL_OUTBOX_DIR>/<emailId>.eml` for a developer to open.
 */
@Injectable()
export class MailTransport implements OnApplicationShutdown {
  private readonly logger = new Logger(MailTransport.name);
  private readonly transporter: Transporter;
  private readonly outboxDir: string | null;
  private outboxReady?: Promise<unknown>;
  private inFlight = 0;
  private idle?: () => void;
  private closed = false;

  constructor(
    @Inject(MAIL_CONFIG) config: MailConfig,
    private readonly throttle: RelayThrottle,
  ) {
    if (config.smtpUrl) {
      this.outboxDir = null;
      // The URL's settings (host, port, smtps:, credentials, query options such as `?tls.rejectUnauthorized=`),
      // then ours. Not `{url, pool, ...}`: given a `url`, nodemailer's createTransport reads the URL alone
      // and drops every other option, so there was no pool (a new connection per email) and none of the
      // timeouts below applied.
      this.transporter = nodemailer.createTransport({
        ...parseConnectionUrl(config.smtpUrl),
        pool: true,
        maxConnections: config.smtpPoolSize,
        // A pooled connection is recycled after this many messages; high, since the relay is ours.
        maxMessages: 10_000,
        connectionTimeout: 15_000,
        greetingTimeout: 15_000,
        // A worker slot stuck on a dead socket delays every email behind it; BullMQ retries instead.
        socketTimeout: 60_000,
        // Each pooled connection opened with Nagle's algorithm off (relay-socket.ts says why).
        getSocket: connectToRelay,
      } as nodemailer.TransportOptions);
      this.transporter.use('stream', (mail, done) => {
        this.gateBeforeMailFrom(mail as unknown as CompiledMail);
        done();
      });
    } else {
      this.outboxDir = config.outboxDir;
      this.transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
    }
  }

  get mode(): 'smtp' | 'outbox' {
    return this.outboxDir ? 'outbox' : 'smtp';
  }

  /** Sends one message; `fileStem` names the outbox file (the email id). Throws nodemailer's errors. */
  async send(message: SendMailOptions, fileStem: string): Promise<SentMessage> {
    // A closed pool would queue the message and never answer: the job would hang, and with it the
    // worker's shutdown. Failing lets BullMQ retry it on a live worker.
    if (this.closed) throw new Error('mail transport is closed (worker shutting down)');
    this.inFlight += 1;
    const ticket: RelayGateTicket = { held: false };
    try {
      // nodemailer types the answer `any`; these are the fields its transports set.
      const info = (await this.transporter.sendMail({ ...message, relayGate: ticket } as SendMailOptions)) as {
        response?: string;
        messageId?: string;
        message?: unknown;
      };
      if (!this.outboxDir) return { providerMessageId: String(info.response ?? info.messageId) };
      return { providerMessageId: await this.writeOutbox(fileStem, info.message as Buffer) };
    } catch (err) {
      // First code to see the reply (only promise hops from nodemailer's callback, no I/O in between):
      // close the gate before any other pooled connection can start a transaction.
      if (isThrottling(err)) this.throttle.seen();
      if (ticket.held) throw new RelayPausedError();
      throw err;
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.idle?.();
    }
  }

  /**
   * The relay pause, checked at the last moment before a transaction starts: the SMTP pool reads the
   * envelope (`getEnvelope`) synchronously right before it writes MAIL FROM, on the connection it picked,
   * once connected. With the gate closed (RelayThrottle.mayStartTransaction) the envelope has no
   * recipient, which nodemailer refuses before writing anything: the message is marked held and `send`
   * throws RelayPausedError. A message that waited for a connection or for nodemailer's compile step
   * while the relay throttled another one therefore never starts during the pause.
   */
  private gateBeforeMailFrom(mail: CompiledMail): void {
    const message = mail.message;
    const envelopeOf = message.getEnvelope.bind(message);
    message.getEnvelope = () => {
      const envelope = envelopeOf();
      if (this.throttle.mayStartTransaction()) return envelope;
      if (mail.data.relayGate) mail.data.relayGate.held = true;
      return { ...envelope, to: [] };
    };
  }

  /** Temp file + rename: a reader of the outbox never sees half a message, and a retry overwrites whole. */
  private async writeOutbox(fileStem: string, raw: Buffer): Promise<string> {
    const dir = this.outboxDir!;
    this.outboxReady ??= mkdir(dir, { recursive: true });
    await this.outboxReady;
    const file = path.join(dir, `${fileStem}.eml`);
    const temp = path.join(dir, `.${fileStem}.${process.pid}.tmp`);
    await writeFile(temp, raw);
    await rename(temp, file);
    return file;
  }

  /**
   * Closing the pool drops its queued messages, so wait (bounded) for the sends in flight. The worker
   * runner has already let the active jobs finish (WorkerRunner closes the workers before any
   * shutdown hook runs), so normally nothing is in flight here.
   */
  async onApplicationShutdown(): Promise<void> {
    if (this.inFlight > 0) {
      await Promise.race([new Promise<void>((resolve) => (this.idle = resolve)), new Promise((r) => setTimeout(r, 30_000).unref())]);
    }
    this.closed = true;
    try {
      this.transporter.close();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'closing the mail transport failed');
    }
  }
}
