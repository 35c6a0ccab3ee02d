import '@app/service-kit/require-supported-node';
import 'reflect-metadata';
import { runWorker } from '@app/service-kit';
import { APP_VERSION } from './build-info.js';
import { loadPlatformConfig } from './config/platform-config.js';
import { RecurringJobs } from './modules/maintenance/recurring-jobs.js';
import { AiActionsSchedule } from './modules/ai-assistant/actions/pending-actions.queue.js';
import { AttachmentsQueue } from './modules/attachments/attachments.queue.js';
import { WorkerModule } from './worker.module.js';

runWorker({
  name: 'platform',
  loadConfig: () => loadPlatformConfig(),
  module: (config) => WorkerModule.forRoot(config),
  concurrency: (config) => config.workerConcurrency,
  metrics: {
    port: (config) => config.workerMetricsPort,
    queueNamePrefix: 'platform-',
    token: (config) => config.metricsToken,
    version: APP_VERSION,
  },
  afterStart: async (app) => {
    await app.get(RecurringJobs).schedule();
    await app.get(AiActionsSchedule).schedule();
    await app.get(AttachmentsQueue).schedule();
  },
});
