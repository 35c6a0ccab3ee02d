import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError } from '../config/load-config.js';
import { AppLogger } from '../http/logging.module.js';
import { JobMetrics } from '../metrics/job-metrics.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { startWorkerMetricsServer } from '../metrics/worker-metrics-server.js';
import { WorkerRunner } from './worker-runner.service.js';

export interface RunWorkerOptions<TConfig> {
  /** `platform`, `mail`: the ready line reads `<name> worker consuming <queues>`. */
  name: string;
  loadConfig: () => TConfig;
  /** The worker's root module for a config (the app's modules, job processors only). */
  module: (config: TConfig) => DynamicModule;
  /** Default concurrency of each queue's worker; a queue's owner may declare its own. */
  concurrency: (config: TConfig) => number;
  /** After the workers consume: e.g. upsert the recurring job schedulers. */
  afterStart?: (app: INestApplicationContext, config: TConfig) => Promise<void>;
  /**
   * Prometheus metrics (job durations and failures, queue depth and age, process metrics) and the
   * worker's probes (`/healthz`, `/readyz`) served on this port (0: a free one, logged); queues
   * named `<queueNamePrefix>...` are measured. Without it the worker serves no HTTP.
   */
  metrics?: { port: (config: TConfig) => number; queueNamePrefix: string; token?: (config: TConfig) => string | null; version?: string };
}

@Module({})
class WorkerRootModule {}

/**
 * A worker process (`dist/worker.js`): the app's modules without HTTP, one BullMQ worker per queue
 * that has `@OnJob` handlers, JSON logs, and SIGTERM letting active jobs finish before the pools
 * close. An invalid environment is one line on stderr and exit code 1.
 */
export function runWorker<TConfig>(options: RunWorkerOptions<TConfig>): void {
  start(options).catch((err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  });
}

async function start<TConfig>(options: RunWorkerOptions<TConfig>): Promise<void> {
  const config = options.loadConfig();
  const metrics = options.metrics;
  const root: DynamicModule = metrics
    ? {
        module: WorkerRootModule,
        imports: [
          options.module(config),
          MetricsModule.forRoot({
            service: `${options.name}-worker`,
            queueNamePrefix: metrics.queueNamePrefix,
            token: metrics.token?.(config) ?? null,
            version: metrics.version,
          }),
        ],
      }
    : options.module(config);
  const app = await NestFactory.createApplicationContext(root, { bufferLogs: true });
  app.useLogger(app.get(AppLogger));
  app.enableShutdownHooks();
  const logger = app.get(AppLogger);
  if (metrics) {
    // Before the workers start, so probes answer while schedulers are upserted; a port already taken
    // (two workers on one host) costs the metrics, not the jobs.
    const port = metrics.port(config);
    await startWorkerMetricsServer(app, port).then(
      (server) => logger.log(`${options.name} worker metrics on ${server.url}/metrics`),
      (err: unknown) => logger.error({ err, port }, `${options.name} worker metrics server not started`),
    );
  }
  const onJobSettled = metrics ? app.get(JobMetrics).observe : undefined;
  const queues = await app.get(WorkerRunner).start({ concurrency: options.concurrency(config), onJobSettled });
  await options.afterStart?.(app, config);
  logger.log(`${options.name} worker consuming ${queues.join(', ') || '(no queues)'}`);
}
