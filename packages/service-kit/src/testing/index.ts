export * from './test-database.js';
export * from './redis-server.js';
export * from './wait-for.js';
export * from './app-under-test.js';
export * from './node-process.js';
export * from './openapi-fuzz.js';
export * from './route-table.js';
