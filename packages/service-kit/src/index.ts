export * from './config/index.js';
export * from './database/index.js';
export * from './errors/index.js';
export * from './http/index.js';
export * from './queue/index.js';
export * from './health/index.js';
export * from './metrics/index.js';
export * from './queue-dashboard/index.js';
