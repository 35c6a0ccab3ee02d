export * from './domain-error.js';
export * from './normalize-error.js';
