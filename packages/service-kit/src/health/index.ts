export * from './health.controller.js';
export * from './health.module.js';
