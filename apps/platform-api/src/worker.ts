import 'reflect-metadata';
import { runWorker } from '@app/service-kit';
import { loadPlatformConfig } from './config/platform-config.js';
import { RecurringJobs } from './modules/maintenance/recurring-jobs.js';
import { WorkerModule } from './worker.module.js';

runWorker({
  name: 'platform',
  loadConfig: () => loadPlatformConfig(),
  module: (config) => WorkerModule.forRoot(config),
  concurrency: (config) => config.workerConcurrency,
  afterStart: (app) => app.get(RecurringJobs).schedule(),
});
