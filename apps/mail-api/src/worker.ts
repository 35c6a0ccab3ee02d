import '@app/service-kit/require-supported-node';
import 'reflect-metadata';
import { runWorker } from '@app/service-kit';
import { APP_VERSION } from './build-info.js';
import { loadMailConfig } from './config/mail-config.js';
import { RecurringJobs } from './modules/maintenance/recurring-jobs.js';
import { WorkerModule } from './worker.module.js';

runWorker({
  name: 'mail',
  loadConfig: () => loadMailConfig(),
  module: (config) => WorkerModule.forRoot(config),
  concurrency: (config) => config.workerConcurrency,
  metrics: {
    port: (config) => config.workerMetricsPort,
    queueNamePrefix: 'mail-',
    token: (config) => config.metricsToken,
    version: APP_VERSION,
  },
  afterStart: (app) => app.get(RecurringJobs).schedule(),
});
