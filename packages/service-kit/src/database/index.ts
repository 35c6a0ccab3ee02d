export * from './provision.js';
export * from './migrate.js';
export * from './sql-where.js';
export * from './iso-timestamp.js';
export * from './prepared-query.js';
export * from './query.js';
export * from './pool-errors.js';
export * from './database-unavailable.js';
