export * from './errors.js';
export * from './queues.js';
export * from './mail.js';
export * from './mail-api.js';
