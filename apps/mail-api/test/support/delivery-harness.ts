import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { startInProcessWorker } from '@app/service-kit/testing';
import type { MailConfig } from '../../src/config/mail-config.js';
import { EmailDeliveryQueue, MailEmailPriority } from '../../src/modules/delivery/email-delivery.queue.js';
import { WorkerModule } from '../../src/worker.module.js';
import { insertEmails, insertVerifiedDomain, type EmailFixture, type VerifiedDomain } from './delivery-fixtures.js';
import { createProject } from './mail-api-helpers.js';
import { startMailApp, type MailTestApp } from './mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './smtp-sink.js';

/** A project that sends from a verified domain (DeliveryHarness.sendingProject). */
export interface SendingProject {
  projectId: string;
  domain: VerifiedDomain;
  /** Inserts the emails (defaults: the project's sender) and enqueues them; answers their ids in order. */
  queueEmails(fixtures: EmailFixture[], priority?: number): Promise<string[]>;
}

/**
 * The setup the delivery, campaign, workflow and deliverability specs share: a real SMTP sink, the HTTP
 * app sending to it (real Postgres and Redis, a fresh database), and the in-process worker a test starts
 * (the context worker.ts builds, consuming the queues the test names). Specs that kill workers run
 * `dist/worker.js` instead (worker-process.ts).
 */
export class DeliveryHarness {
  /** Every worker started and not stopped yet, in start order. */
  private readonly started: INestApplicationContext[] = [];

  private constructor(
    readonly t: MailTestApp,
    readonly sink: SmtpSink,
    readonly db: DataSource,
  ) {}

  /** The sink, then the app with MAIL_SMTP_URL pointing at it, plus `env`. */
  static async start(env: NodeJS.ProcessEnv = {}): Promise<DeliveryHarness> {
    const sink = await startSmtpSink();
    try {
      const t = await startMailApp({ env: { MAIL_SMTP_URL: sink.url, ...env } });
      return new DeliveryHarness(t, sink, t.app.get(DataSource));
    } catch (err) {
      await sink.close();
      throw err;
    }
  }

  /** The worker the last `startWorker` started (null once `stopWorker` closed them). */
  get worker(): INestApplicationContext | null {
    return this.started.at(-1) ?? null;
  }

  /**
   * A new project with the verified sender domain of `from` (its DKIM key in the database), and
   * `queueEmails`: rows inserted from `from`, then enqueued as the API enqueues them.
   */
  async sendingProject(from: string): Promise<SendingProject> {
    const projectId = (await createProject(this.t)).id;
    const domain = await insertVerifiedDomain(this.db, projectId, from.slice(from.indexOf('@') + 1));
    const queueEmails = async (fixtures: EmailFixture[], priority: number = MailEmailPriority.Transactional) => {
      const ids = await insertEmails(this.db, projectId, fixtures, { from });
      await this.t.app.get(EmailDeliveryQueue).enqueue(ids.map((id) => ({ id, projectId, priority })));
      return ids;
    };
    return { projectId, domain, queueEmails };
  }

  /** A worker on the app's config plus `overrides`, consuming `queues` (several may run side by side). */
  async startWorker(queues: string[], overrides: Partial<MailConfig> = {}): Promise<INestApplicationContext> {
    const worker = await startInProcessWorker(WorkerModule.forRoot({ ...this.t.config, ...overrides }), { queues });
    this.started.push(worker);
    return worker;
  }

  /** Closes every worker started (each spec's afterEach), the last one first. */
  async stopWorker(): Promise<void> {
    for (const worker of this.started.splice(0).reverse()) await worker.close();
  }

  /** The worker, the app (its database dropped), then the sink. */
  async close(): Promise<void> {
    await this.stopWorker();
    await this.t.close();
    await this.sink.close();
  }
}
