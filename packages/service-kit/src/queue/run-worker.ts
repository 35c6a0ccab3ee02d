import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ConfigError } from '../config/load-config.js';
import { AppLogger } from '../http/logging.module.js';
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
}

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
  const app = await NestFactory.createApplicationContext(options.module(config), { bufferLogs: true });
  app.useLogger(app.get(AppLogger));
  app.enableShutdownHooks();
  const queues = await app.get(WorkerRunner).start({ concurrency: options.concurrency(config) });
  await options.afterStart?.(app, config);
  app.get(AppLogger).log(`${options.name} worker consuming ${queues.join(', ') || '(no queues)'}`);
}
