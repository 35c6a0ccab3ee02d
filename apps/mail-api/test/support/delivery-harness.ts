import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { startInProcessWorker } from '@app/service-kit/testing';
import type { MailConfig } from '../../src/config/mail-config.js';
import { WorkerModule } from '../../src/worker.module.js';
import { startMailApp, type MailTestApp } from './mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './smtp-sink.js';

/**
 * The setup the delivery, campaign, workflow and deliverability specs share: a real SMTP sink, the HTTP
 * app sending to it (real Postgres and Redis, a fresh database), and the in-process worker a test starts
 * (the context worker.ts builds, consuming the queues the test names). Specs that kill workers run
 * `dist/worker.js` instead (worker-process.ts).
 */
export class DeliveryHarness {
  /** The worker the last `startWorker` started; `stopWorker` closes it (each spec's afterEach). */
  worker: INestApplicationContext | null = null;

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

  /** A worker on the app's config plus `overrides`, consuming `queues`. */
  async startWorker(queues: string[], overrides: Partial<MailConfig> = {}): Promise<INestApplicationContext> {
    this.worker = await startInProcessWorker(WorkerModule.forRoot({ ...this.t.config, ...overrides }), { queues });
    return this.worker;
  }

  async stopWorker(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.close();
  }

  /** The worker, the app (its database dropped), then the sink. */
  async close(): Promise<void> {
    await this.stopWorker();
    await this.t.close();
    await this.sink.close();
  }
}
