export * from './queue-dashboard.js';
export * from './queue-dashboard.module.js';
export * from './queue-dashboard-access.js';
