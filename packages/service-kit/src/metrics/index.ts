export * from './metrics-registry.js';
export * from './http-metrics.js';
export * from './job-metrics.js';
export * from './queue-catalog.js';
export * from './queue-metrics.js';
export * from './metrics.controller.js';
export * from './metrics.module.js';
export * from './worker-metrics-server.js';
