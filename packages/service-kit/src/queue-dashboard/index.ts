export * from './queue-dashboard.js';
export * from './queue-dashboard.module.js';
