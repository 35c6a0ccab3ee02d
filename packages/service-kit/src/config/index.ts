export * from './load-config.js';
export * from './data-dir.js';
