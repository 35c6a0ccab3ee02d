export * from './load-config.js';
export * from './data-dir.js';
export * from './env-variable.js';
export * from './service-env.js';
