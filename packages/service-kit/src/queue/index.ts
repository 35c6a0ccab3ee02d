export * from './redis.js';
export * from './on-job.decorator.js';
export * from './queue.service.js';
export * from './worker-runner.service.js';
export * from './queue.module.js';
export * from './heartbeat.js';
export * from './run-worker.js';
