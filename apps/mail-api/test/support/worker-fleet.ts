import { DataSource } from 'typeorm';
import { startRedisServer, type RedisServerHandle } from '@app/service-kit/testing';
import { startMailApp, type MailTestApp } from './mail-test-app.js';
import { startSmtpSink, type SmtpSink } from './smtp-sink.js';
import { startWorkerProcess, workerEnv, type WorkerProcess } from './worker-process.js';

/** Worker settings of the specs that kill workers mid-workflow: both sweeps every second, webhook retries after 50 ms. */
export const FAST_WORKFLOW_RECOVERY: Readonly<Record<string, string>> = {
  MAIL_WORKFLOW_SWEEP_SECONDS: '1',
  MAIL_CAMPAIGN_SWEEP_SECONDS: '1',
  MAIL_WEBHOOK_RETRY_BASE_MS: '50',
};

export interface WorkerFleetOptions {
  /** A redis-server of the fleet's own (a spec that flushes Redis, or whose killed workers leave jobs behind). */
  privateRedis?: boolean;
  /** The app's environment, beyond MAIL_SMTP_URL (and REDIS_URL for a private Redis). */
  env?: NodeJS.ProcessEnv;
  /** MAIL_* settings of every worker (a `startWorker`'s own go on top). */
  workerEnv?: Record<string, string>;
}

/**
 * The setup of the specs that run real worker processes (`node dist/worker.js`, worker-process.ts): a
 * real SMTP sink, optionally a private redis-server, the HTTP app on them (the API side only: fixtures
 * and producers, no worker in the test's process), and the workers a test starts. `stopWorkers` (an
 * afterEach, or `close`) SIGTERMs every worker still running.
 */
export class WorkerFleet {
  /** Every worker started since the last `stopWorkers`, killed ones included, in start order. */
  readonly workers: WorkerProcess[] = [];

  private constructor(
    readonly t: MailTestApp,
    readonly sink: SmtpSink,
    readonly db: DataSource,
    readonly redis: RedisServerHandle | null,
    private readonly sharedWorkerEnv: Record<string, string>,
  ) {}

  static async start(options: WorkerFleetOptions = {}): Promise<WorkerFleet> {
    const redis = options.privateRedis ? await startRedisServer() : null;
    const sink = await startSmtpSink();
    try {
      const t = await startMailApp({ env: { MAIL_SMTP_URL: sink.url, ...(redis ? { REDIS_URL: redis.url } : {}), ...options.env } });
      return new WorkerFleet(t, sink, t.app.get(DataSource), redis, options.workerEnv ?? {});
    } catch (err) {
      await sink.close();
      await redis?.stop();
      throw err;
    }
  }

  /** A worker process on the app's config, the fleet's worker settings and `overrides`, once it consumes its queues. */
  async startWorker(name: string, overrides: Record<string, string> = {}): Promise<WorkerProcess> {
    const worker = startWorkerProcess(name, workerEnv(this.t.config, { ...this.sharedWorkerEnv, ...overrides }));
    this.workers.push(worker);
    await worker.ready;
    return worker;
  }

  /** Workers booted side by side (a boot takes seconds, more on a loaded machine). */
  startWorkers(names: readonly string[], overrides: Record<string, string> = {}): Promise<WorkerProcess[]> {
    return Promise.all(names.map((name) => this.startWorker(name, overrides)));
  }

  /** The workers that have not exited. */
  alive(): WorkerProcess[] {
    return this.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  }

  async stopWorkers(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((w) => w.kill('SIGTERM')));
  }

  /** The workers, the app (its database dropped), the sink, then the private Redis. */
  async close(): Promise<void> {
    await this.stopWorkers();
    await this.t.close();
    await this.sink.close();
    await this.redis?.stop();
  }
}
