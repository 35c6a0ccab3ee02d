import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { ConfigError, WorkerRunner } from '@app/service-kit';
import { loadPlatformConfig } from './config/platform-config.js';
import { RecurringJobs } from './modules/maintenance/recurring-jobs.js';
import { WorkerModule } from './worker.module.js';

/** BullMQ entry: the same modules as the API, job processors only. SIGTERM lets active jobs finish. */
async function main(): Promise<void> {
  const config = loadPlatformConfig();
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  const queues = await app.get(WorkerRunner).start({ concurrency: config.workerConcurrency });
  await app.get(RecurringJobs).schedule();
  app.get(Logger).log(`platform worker consuming ${queues.join(', ') || '(no queues)'}`);
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
