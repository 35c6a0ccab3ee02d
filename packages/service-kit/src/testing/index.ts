export * from './test-database.js';
export * from './redis-server.js';
