export * from './provision.js';
export * from './migrate.js';
